"""Export to OpenNRE's JSON-lines format, so other extractors can run on the benchmark.

One line per sentence: ``{"token": [...], "h": {"name", "id", "pos": [s, e]}, "t": {...},
"relation": name}`` with token positions ``[start, end)``, plus ``rel2id.json``. OpenNRE's bag
loader groups lines into bags by (h.id, t.id, relation) for training and by (h.id, t.id) for
evaluation.

Mentions that could not be located (span ``[-1, -1]``; about 9% of the release's rows, at rates
that differ between female and male articles) follow ``unlocated``, named as in
:data:`relext.model.bags.UNLOCATED_POLICIES`:

* ``"start"`` (default): every row is written; an unlocated mention gets ``"pos": [0, 0]``, an
  empty span at token 0, i.e. position features relative to the sentence start (the head is the
  article's subject, which usually opens the sentence: "She married ..."). This is what
  ``relext`` does in training and evaluation, so the exported test sets hold exactly the rows
  ``relext`` is evaluated on, and no split loses rows of one gender more than of the other.
  ``"located": 0`` in ``h``/``t`` marks such mentions (OpenNRE ignores extra fields; 1/0 rather
  than JSON's true/false, because OpenNRE's loader reads each line as a Python literal).
* ``"skip"``: such rows are left out of every split, as a format without room for them would
  have to (what this export did before it had the option; ``relext``'s own ``"skip"`` leaves
  them out of training bags only). The dropped rows are counted per split and gender in
  ``manifest.json``, and a warning is recorded (and issued) for every split whose genders lose
  rows at different rates, and when ``male_test`` and ``female_test`` do.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS

#: How mentions that were not located are exported (the names of ``relext.model.bags.UNLOCATED_POLICIES``).
UNLOCATED_POLICIES: tuple[str, ...] = ("start", "skip")
#: The split pair whose drop rates must match for a gender comparison on the test sets.
TEST_PAIR: tuple[str, str] = ("male_test", "female_test")
UNLOCATED_RULES = {
    "start": "rows with an unlocated head or tail are kept; the mention gets the empty span [0, 0] "
             "(position features relative to the sentence start) and \"located\": 0, relext's rule "
             "in training and evaluation",
    "skip": "rows with an unlocated head or tail are dropped (counted per split and gender)",
}


def _located(span) -> bool:
    return span[0] >= 0


def opennre_line(row: dict[str, Any], unlocated: str = "start") -> dict[str, Any] | None:
    """One OpenNRE example from a ``sentences`` row (ClassLabels as ints); None for a row with an
    unlocated mention under ``unlocated="skip"``."""
    if unlocated not in UNLOCATED_POLICIES:
        raise ValueError(f"unknown unlocated policy {unlocated!r}; expected one of {list(UNLOCATED_POLICIES)}")
    h_ok, t_ok = _located(row["head_span"]), _located(row["tail_span"])
    if unlocated == "skip" and not (h_ok and t_ok):
        return None
    return {
        "token": list(row["tokens"]),
        "h": {"name": row["head"], "id": row["entity_id"], "pos": list(row["head_span"]) if h_ok else [0, 0],
              "located": int(h_ok)},
        "t": {"name": row["tail"], "id": f"{row['entity_id']}|{row['tail']}",
              "pos": list(row["tail_span"]) if t_ok else [0, 0], "located": int(t_ok)},
        "relation": RELATIONS[row["relation"]],
        # extra fields (ignored by OpenNRE) that keep the fairness analysis possible
        "gender": GENDERS[row["gender"]],
        "id": row["id"],
    }


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def drop_rate_warnings(splits: dict[str, dict[str, Any]]) -> list[str]:
    """A warning for every split whose female and male rows were dropped at different rates, and
    for the test splits when ``male_test`` and ``female_test`` were (manifest ``splits`` entries)."""
    out = []
    for split, m in splits.items():
        by = m["by_gender"]
        if all(g in by for g in GENDERS) and by["female"]["skipped_rate"] != by["male"]["skipped_rate"]:
            f, ma = by["female"], by["male"]
            out.append(f"{split}: {f['skipped_unlocated']} of {f['rows']} female rows dropped "
                       f"({f['skipped_rate']:.1%}) vs {ma['skipped_unlocated']} of {ma['rows']} male rows "
                       f"({ma['skipped_rate']:.1%})")
    a, b = TEST_PAIR
    if a in splits and b in splits:
        ra, rb = (_rate(splits[s]["skipped_unlocated"], splits[s]["rows"]) for s in TEST_PAIR)
        if ra != rb:
            out.append(f"test: {splits[a]['skipped_unlocated']} of {splits[a]['rows']} {a} rows dropped ({ra:.1%}) "
                       f"vs {splits[b]['skipped_unlocated']} of {splits[b]['rows']} {b} rows ({rb:.1%}): gender "
                       f"gaps measured on this export are measured on differently filtered test sets")
    return out


def export_opennre(dsdict, out_dir: str | os.PathLike, *, prefix: str = "wikigenderbias",
                   overwrite: bool = False, unlocated: str = "start",
                   source: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``<prefix>_<split>.txt`` for every split, ``rel2id.json`` and ``manifest.json`` into
    ``out_dir``; returns the manifest. ``unlocated``: see the module docstring. The manifest
    counts, per split and per gender, the rows, the lines written, the rows dropped
    (``skipped_unlocated``, with its rate) and the rows kept with an unlocated mention
    (``unlocated_kept``), and lists ``warnings`` (also issued) when the genders' drop rates differ.
    ``source`` (e.g. the benchmark and its fingerprint) is recorded as is."""
    from wgbcore.atomicio import atomic_write_json, replace_dir

    if unlocated not in UNLOCATED_POLICIES:
        raise ValueError(f"unknown unlocated policy {unlocated!r}; expected one of {list(UNLOCATED_POLICIES)}")
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
        raise FileExistsError(f"{out_dir} exists and is not empty; pass --overwrite to replace it")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    manifest: dict[str, Any] = {"format": "opennre", "rel2id": "rel2id.json",
                                "unlocated": {"policy": unlocated, "rule": UNLOCATED_RULES[unlocated]}}
    if source is not None:
        manifest["source"] = source
    manifest["splits"] = {}
    try:
        atomic_write_json(tmp / "rel2id.json", {r: i for i, r in enumerate(RELATIONS)}, indent=1)
        for split in SPLITS:
            ds = dsdict[split]
            name = f"{prefix}_{split}.txt"
            per = {g: {"rows": 0, "sentences": 0, "skipped_unlocated": 0, "unlocated_kept": 0} for g in GENDERS}
            with open(tmp / name, "w", encoding="utf-8") as fh:
                for row in ds:
                    c = per[GENDERS[row["gender"]]]
                    c["rows"] += 1
                    line = opennre_line(row, unlocated)
                    if line is None:
                        c["skipped_unlocated"] += 1
                        continue
                    c["unlocated_kept"] += not (line["h"]["located"] and line["t"]["located"])
                    fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                    c["sentences"] += 1
            by_gender = {g: {**c, "skipped_rate": _rate(c["skipped_unlocated"], c["rows"])}
                         for g, c in per.items() if c["rows"]}
            total = {k: sum(c[k] for c in per.values()) for k in ("rows", "sentences", "skipped_unlocated",
                                                                    "unlocated_kept")}
            manifest["splits"][split] = {"file": name, **total,
                                         "skipped_rate": _rate(total["skipped_unlocated"], total["rows"]),
                                         "by_gender": by_gender}
        manifest["warnings"] = drop_rate_warnings(manifest["splits"])
        atomic_write_json(tmp / "manifest.json", manifest)
        replace_dir(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for w in manifest["warnings"]:
        warnings.warn(f"OpenNRE export drops rows of the two genders at different rates: {w}", stacklevel=2)
    return manifest
