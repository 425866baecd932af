"""Writing a benchmark folder: both configurations as parquet, the dataset card, the build report.

``write_benchmark`` is the one writer every benchmark goes through (the embedded release and
``wgb data build``): it derives the ``sentences`` configuration from entity records (tokens and
recomputed spans), writes everything into a temporary sibling folder and renames it into place,
so a reader never sees a half-written benchmark.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

from wikigenderbias.schema import CONFIGS, GENDERS, RELATIONS, SPLITS, features_for, gender_id, relation_id
from wikigenderbias.spans import locate, tokenize

PARQUET_NAME = "{split}-00000-of-00001.parquet"


def sentence_id(entity_id: str, text: str) -> str:
    """Stable id of one sentence of one article: the same text of the same head, the same id."""
    return f"{entity_id}-s{hashlib.sha1(text.encode('utf-8')).hexdigest()[:10]}"


def sentence_rows(entity: dict[str, Any], *, source: str = "distant") -> Iterable[dict[str, Any]]:
    """Rows of the ``sentences`` configuration for one entity record, spans recomputed."""
    eid = entity["entity_id"]
    head = entity["entity"]
    gender = entity["gender"]
    names = [rel["relation"] for rel in entity["relations"]]
    for j, rel in enumerate(entity["relations"]):
        name = rel["relation"]
        relation_id(name)  # unknown relation -> clear error
        # a relation listed more than once for an entity (e.g. two NA tails) gets its entry index
        prefix = f"{eid}-{name}" if names.count(name) == 1 else f"{eid}-{name}-{j:02d}"
        for k, text in enumerate(rel["sentences"]):
            tokens = tokenize(text)
            loc = locate(tokens, head, rel["tail"], name)
            yield {
                "id": f"{prefix}-{k:03d}",
                "entity_id": eid,
                "sentence_id": sentence_id(eid, text),
                "head": head,
                "tail": rel["tail"],
                "relation": name,
                "gender": gender,
                "text": text,
                "tokens": tokens,
                "head_span": list(loc.head_span),
                "tail_span": list(loc.tail_span),
                "head_match": loc.head_match,
                "tail_match": loc.tail_match,
                "source": rel.get("source", source),
            }


def span_report(rows_by_split: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Counts of located mentions per relation and gender (and per split), and match kinds."""
    def empty() -> dict[str, int]:
        return {"rows": 0, "head_located": 0, "tail_located": 0, "both_located": 0}

    per_rel_gender: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(empty))
    per_split: dict[str, dict[str, int]] = defaultdict(empty)
    kinds: dict[str, Counter] = {"head": Counter(), "tail": Counter()}
    for split, rows in rows_by_split.items():
        for r in rows:
            for bucket in (per_rel_gender[r["relation"]][r["gender"]], per_split[split]):
                bucket["rows"] += 1
                h = r["head_match"] != "none"
                t = r["tail_match"] != "none"
                bucket["head_located"] += h
                bucket["tail_located"] += t
                bucket["both_located"] += h and t
            kinds["head"][r["head_match"]] += 1
            kinds["tail"][f'{r["relation"]}:{r["tail_match"]}'] += 1

    def with_rates(b: dict[str, int]) -> dict[str, float | int]:
        out: dict[str, float | int] = dict(b)
        for key in ("head_located", "tail_located", "both_located"):
            out[key.replace("located", "rate")] = round(b[key] / b["rows"], 4) if b["rows"] else 0.0
        return out

    total = empty()
    for b in per_split.values():
        for k in total:
            total[k] += b[k]
    return {
        "total": with_rates(total),
        "per_relation_gender": {
            rel: {g: with_rates(per_rel_gender[rel][g]) for g in GENDERS if g in per_rel_gender[rel]}
            for rel in RELATIONS if rel in per_rel_gender
        },
        "per_split": {s: with_rates(per_split[s]) for s in SPLITS if s in per_split},
        "match_kinds": {side: dict(sorted(c.items())) for side, c in kinds.items()},
    }


def _validate_entities(split: str, entities: list[dict[str, Any]]) -> None:
    for i, e in enumerate(entities):
        where = f"split {split!r}, entity #{i}"
        for field in ("entity_id", "entity", "gender", "relations"):
            if field not in e:
                raise ValueError(f"{where}: missing field {field!r}")
        gender_id(e["gender"])
        for j, r in enumerate(e["relations"]):
            for field in ("relation", "tail", "sentences"):
                if field not in r:
                    raise ValueError(f"{where} ({e['entity']!r}), relation #{j}: missing field {field!r}")
            try:
                relation_id(r["relation"])
            except ValueError as err:
                raise ValueError(f"{where} ({e['entity']!r}): {err}") from None


def _entity_row(e: dict[str, Any]) -> dict[str, Any]:
    return {
        "entity_id": e["entity_id"],
        "entity": e["entity"],
        "gender": e["gender"].lower(),
        "relations": [
            {
                "relation": r["relation"],
                "tail": r["tail"],
                "sentences": list(r["sentences"]),
                "positions": [
                    {"head": list(p.get("head", [])), "tail": list(p.get("tail", []))} for p in r.get("positions", [])
                ],
            }
            for r in e["relations"]
        ],
    }


def _write_parquet(rows: list[dict[str, Any]], config: str, path: Path) -> None:
    from datasets import Dataset

    ds = Dataset.from_list(rows, features=features_for(config)) if rows else Dataset.from_dict(
        {k: [] for k in features_for(config)}, features=features_for(config))
    import pyarrow.parquet as pq

    table = ds.data.table  # carries the `datasets` features (ClassLabels) in its schema metadata
    pq.write_table(table, str(path), compression="zstd", compression_level=9)


def write_benchmark(
    folder: str | os.PathLike,
    entities_by_split: dict[str, list[dict[str, Any]]],
    *,
    description: str,
    report: dict[str, Any] | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> Path:
    """Write a benchmark folder loadable with ``datasets.load_dataset(folder)``.

    ``entities_by_split`` maps each of ``SPLITS`` to entity records in the form of
    :func:`wikigenderbias.schema.entity_features` (gender as "female"/"male", relations with
    ``relation``, ``tail``, ``sentences`` and optionally the original ``positions``).
    ``description`` is the "how it was built" section of the dataset card; ``report`` extra
    facts recorded in ``report.json`` (the span report is added here).
    """
    from tqdm.auto import tqdm

    folder = Path(folder)
    missing = [s for s in SPLITS if s not in entities_by_split]
    unknown = [s for s in entities_by_split if s not in SPLITS]
    if missing or unknown:
        raise ValueError(f"splits must be exactly {SPLITS}; missing {missing}, unknown {unknown}")
    if folder.exists() and not overwrite:
        raise FileExistsError(f"{folder} exists; pass overwrite=True (--overwrite) to replace it")
    for split, ents in entities_by_split.items():
        if not ents:
            raise ValueError(f"split {split!r} is empty: every split needs at least one entity "
                             "(datasets cannot load an empty parquet split)")
        _validate_entities(split, ents)

    rows_by_split: dict[str, list[dict[str, Any]]] = {}
    bar = tqdm(total=sum(len(v) for v in entities_by_split.values()), desc="locating mentions",
               unit="entity", disable=None if progress else True)
    for split in SPLITS:
        rows = []
        for e in entities_by_split[split]:
            rows.extend(sentence_rows(e))
            bar.update(1)
        rows_by_split[split] = rows
    bar.close()

    full_report = dict(report or {})
    full_report["spans"] = span_report(rows_by_split)
    full_report["counts"] = counts_report(entities_by_split, rows_by_split)

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        for config in CONFIGS:
            (tmp / "data" / config).mkdir(parents=True)
        for split in SPLITS:
            _write_parquet(rows_by_split[split], "sentences",
                           tmp / "data" / "sentences" / PARQUET_NAME.format(split=split))
            _write_parquet([_entity_row(e) for e in entities_by_split[split]], "entities",
                           tmp / "data" / "entities" / PARQUET_NAME.format(split=split))
        (tmp / "report.json").write_text(json.dumps(full_report, indent=2, sort_keys=True) + "\n")
        from wikigenderbias.card import render_card

        (tmp / "README.md").write_text(render_card(description=description, report=full_report))
        if folder.exists():
            old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
            os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def counts_report(entities_by_split: dict[str, list[dict[str, Any]]],
                  rows_by_split: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Entities and sentences per split and gender (the numbers of the dataset card)."""
    out: dict[str, Any] = {}
    for split in SPLITS:
        ents = entities_by_split[split]
        g = Counter(e["gender"].lower() for e in ents)
        rel = Counter(r["relation"] for r in rows_by_split[split])
        out[split] = {
            "entities": len(ents),
            "entities_by_gender": {k: g.get(k, 0) for k in GENDERS},
            "sentences": len(rows_by_split[split]),
            "sentences_by_relation": {k: rel.get(k, 0) for k in RELATIONS},
        }
    return out


__all__ = ["write_benchmark", "sentence_rows", "span_report", "counts_report", "sentence_id", "PARQUET_NAME"]
