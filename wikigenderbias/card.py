"""The dataset card (README.md with YAML ``configs:``) of a benchmark folder, and the
fingerprint of its data.

Content-addressed loading. For a local folder whose card has YAML ``configs:``, ``datasets``
(5.x, ``LocalDatasetModuleFactory``) names the cache entry
``$HF_DATASETS_CACHE/<folder name>/<config>/0.0.0/<hash>`` where ``<hash>`` is
``Hasher.hash({"dataset_infos": ..., "builder_configs": ...})`` of the card's YAML only: the
data files' bytes never enter it, so two folders with the same name and card shared one cache
entry. Every card written here therefore carries, per configuration, a ``dataset_info`` with
``download_checksums`` (size and sha256 of each data file, keyed by the path relative to the
folder), ``download_size``, ``dataset_size`` and ``splits`` (rows and uncompressed bytes per
split): ``DatasetInfo`` fields that ``datasets`` reads from the card into that hash, so the cache
key changes with the data. They also travel into the prepared dataset (``Dataset.info.download_checksums``; ``datasets``
records checksums itself only when asked to, so it keeps the card's), which lets
:func:`wikigenderbias.release.load` check that what it got is what the folder holds; and
``datasets`` itself checks the split sizes when it prepares a cache entry. The same
fingerprint is in ``report.json`` (:func:`fingerprint`).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import yaml

from wgbcore.provenance import file_sha256

from wikigenderbias.schema import PARQUET_NAME, CONFIGS, GENDERS, RELATIONS, SPLITS, features_for

log = logging.getLogger(__name__)


def data_file(config: str, split: str) -> str:
    """Path of a data file relative to its benchmark folder (the key of its checksum)."""
    return f"data/{config}/{PARQUET_NAME.format(split=split)}"




def config_fingerprint(folder: str | os.PathLike, config: str) -> dict[str, Any]:
    """Size, sha256 and rows of every data file of one configuration, and their combined sha256."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    files: dict[str, dict[str, Any]] = {}
    rows: dict[str, int] = {}
    data_bytes: dict[str, int] = {}
    for split in SPLITS:
        rel = data_file(config, split)
        path = folder / rel
        files[rel] = {"num_bytes": path.stat().st_size, "checksum": file_sha256(path)}
        meta = pq.read_metadata(path)
        rows[split] = meta.num_rows
        data_bytes[split] = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    return {"sha256": digest, "rows": rows, "data_bytes": data_bytes, "files": files}


def fingerprint(folder: str | os.PathLike) -> dict[str, Any]:
    """The fingerprint of a benchmark folder's data, as recorded in ``report.json`` and (per
    configuration) in the card's YAML ``dataset_info``: ``sha256`` over all data files, and per
    configuration the rows per split, their uncompressed size (``data_bytes``, from the parquet
    metadata) and each file's ``num_bytes`` and ``checksum`` (sha256)."""
    configs = {c: config_fingerprint(folder, c) for c in CONFIGS}
    digest = hashlib.sha256(json.dumps({c: v["sha256"] for c, v in configs.items()},
                                       sort_keys=True).encode()).hexdigest()
    return {"algorithm": "sha256", "sha256": digest, "configs": configs}

CITATION = """@inproceedings{gaut-etal-2020-towards,
    title = "Towards Understanding Gender Bias in Relation Extraction",
    author = "Gaut, Andrew and Sun, Tony and Tang, Shirlyn and Huang, Yuxin and Qian, Jing and
              ElSherief, Mai and Zhao, Jieyu and Mirza, Diba and Belding, Elizabeth and
              Chang, Kai-Wei and Wang, William Yang",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "2943--2953",
}"""


#: Hugging Face's ``size_categories`` buckets: (upper bound, label), the first that exceeds n.
_SIZE_BUCKETS = ((10 ** 3, "n<1K"), (10 ** 4, "1K<n<10K"), (10 ** 5, "10K<n<100K"), (10 ** 6, "100K<n<1M"),
                 (10 ** 7, "1M<n<10M"), (10 ** 8, "10M<n<100M"), (10 ** 9, "100M<n<1B"), (10 ** 10, "1B<n<10B"),
                 (10 ** 11, "10B<n<100B"), (10 ** 12, "100B<n<1T"))


def size_category(n: int) -> str:
    """The Hugging Face ``size_categories`` label of a dataset of ``n`` examples."""
    return next((label for bound, label in _SIZE_BUCKETS if n < bound), "n>1T")


def _n_examples(fp: dict[str, Any] | None, report: dict[str, Any] | None) -> int | None:
    """Rows of the default (``sentences``) configuration: from the fingerprint, else the report."""
    rows = ((fp or {}).get("configs", {}).get(CONFIGS[0]) or {}).get("rows")
    if rows:
        return int(sum(rows.values()))
    counts = (report or {}).get("counts") or {}
    if counts:
        return int(sum(c.get("sentences", 0) for c in counts.values()))
    return None


def card_metadata(fp: dict[str, Any] | None = None, report: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Hugging Face metadata of the card's YAML header (everything but ``configs`` and
    ``dataset_info``): language, licence, task, size, sources and who made the labels."""
    annotated = bool((report or {}).get("annotation"))
    meta: dict[str, Any] = {
        "language": ["en"],
        "license": "cc-by-sa-3.0",
        "pretty_name": "WikiGenderBias",
        # labels by distant supervision from DBpedia; test sentences relabelled by people when annotated
        "annotations_creators": ["machine-generated", *(["crowdsourced"] if annotated else [])],
        "language_creators": ["found"],             # Wikipedia text
        "multilinguality": ["monolingual"],
        "source_datasets": ["extended|wikipedia"],  # sentences of English Wikipedia, relations of DBpedia
        "task_categories": ["text-classification"],
        "task_ids": ["multi-class-classification"],  # one relation (or NA) per (pair, sentence) row
        "tags": ["relation-extraction", "gender-bias", "fairness", "distant-supervision"],
    }
    n = _n_examples(fp, report)
    if n is not None:
        meta["size_categories"] = [size_category(n)]
    return meta


def _yaml_header(fp: dict[str, Any] | None = None, report: dict[str, Any] | None = None) -> str:
    from datasets import DatasetInfo

    configs = []
    infos = []
    for i, config in enumerate(CONFIGS):
        entry: dict[str, Any] = {"config_name": config}
        if i == 0:
            entry["default"] = True
        entry["data_files"] = [
            {"split": s, "path": f"data/{config}/{s}-00000-of-00001.parquet"} for s in SPLITS
        ]
        configs.append(entry)
        info = DatasetInfo(features=features_for(config))._to_yaml_dict()
        entry_info: dict[str, Any] = {"config_name": config, **info}
        cfp = (fp or {}).get("configs", {}).get(config)
        if cfp:  # the data's fingerprint: part of the cache key of `datasets` (module docstring)
            entry_info["splits"] = [{"name": s, "num_bytes": cfp["data_bytes"][s], "num_examples": cfp["rows"][s]}
                                    for s in SPLITS]
            entry_info["download_size"] = sum(f["num_bytes"] for f in cfp["files"].values())
            entry_info["dataset_size"] = sum(cfp["data_bytes"].values())
            entry_info["download_checksums"] = {k: {"num_bytes": v["num_bytes"], "checksum": v["checksum"]}
                                                for k, v in sorted(cfp["files"].items())}
        infos.append(entry_info)
    header = {**card_metadata(fp, report), "configs": configs, "dataset_info": infos}
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def card_kind(report: dict[str, Any]) -> str:
    """``"release"`` (the authors' release, converted), ``"build"`` (`wgb data build`) or
    ``"other"`` (records written by other code), from the folder's report."""
    src = report.get("source")
    if isinstance(src, dict) and src.get("kind") == "release":
        return "release"
    return "build" if "config" in report and "dbpedia" in report else "other"


def render_card(*, description: str, report: dict[str, Any]) -> str:
    """The dataset card (``README.md``) of a benchmark folder: the YAML header, then its sections in
    order; ``description`` is the "How it was built" text (read back by :func:`card_description`).

    The card of a build is generated from the build's report (:mod:`wikigenderbias.card_build`: its
    sizes, sources, rules, what is missing); the release's keeps the release's wording. Every
    warning of :func:`card_warnings` is logged and written into the card."""
    fp = report.get("fingerprint")
    counts = report.get("counts", {})
    kind = card_kind(report)
    warnings = card_warnings(report)
    for w in warnings:
        log.warning("dataset card: %s", w)
    if kind == "build":
        from wikigenderbias.card_build import build_sections, build_defects

        head, defects, configurations = build_sections(report), build_defects(report), _BUILD_CONFIGURATIONS
    else:
        head = ""
        defects = _RELEASE_DEFECTS if kind == "release" else _OTHER_DEFECTS
        configurations = _CONFIGURATIONS if kind == "release" else _OTHER_CONFIGURATIONS
    return "".join((_yaml_header(fp, report), _INTRO, _fingerprint_note(fp), configurations,
                    _statistics(counts), _warnings(warnings), _located_mentions(report.get("spans", {})), head,
                    _BUILT, description, _DEFECTS, defects, _GROUPS if kind == "release" else "", _bias(counts),
                    _ABOUT,
                    f"```bibtex\n{CITATION}\n```\n"))


def card_warnings(report: dict[str, Any]) -> list[str]:
    """What a reader of the card must know before using the folder: relation classes without any
    example (e.g. no `NA` example when the build was given no parent, deathDate or almaMater facts)."""
    counts = report.get("counts") or {}
    if not counts:
        return []
    totals = {r: sum((c.get("sentences_by_relation") or {}).get(r, 0) for c in counts.values()) for r in RELATIONS}
    out = []
    na_tails = {k.split(":", 1)[1]: v for k, v in (report.get("distant") or {}).items() if k.startswith("na_tails:")}
    for r, n in totals.items():
        if n:
            continue
        why = ""
        if r == "NA" and na_tails and not any(na_tails.values()):
            why = (f" (no person with examples has any {' or '.join(sorted(na_tails))} fact: give the DBpedia "
                   "files that hold them)")
        elif r == "NA" and na_tails:
            why = " (no sentence mentions an NA tail without a positive tail)"
        out.append(f"relation class `{r}` has no example in any split{why}; a model trained on this folder "
                   f"never sees it")
    return out


def _warnings(warnings: list[str]) -> str:
    return "" if not warnings else "\n## Warnings\n\n" + "".join(f"- {w}\n" for w in warnings)


def _bias(counts: dict[str, Any]) -> str:
    """The bias section, with the male/female ratio of the training split computed from the counts."""
    g = ((counts.get("train") or {}).get("entities_by_gender")) or {}
    m, f = g.get("male", 0), g.get("female", 0)
    ratio = (f"{m / f:.2f}:1 ({m:,} male and {f:,} female heads)" if f else
             f"undefined: {m:,} male and no female heads")
    return _BIAS.format(ratio=ratio)


#: The headings around the "How it was built" text (:func:`card_description` finds it between them).
_BUILT, _DEFECTS = "\n## How it was built\n\n", "\n\n## Known defects\n"

_INTRO = """
# WikiGenderBias

A benchmark for measuring gender bias in relation extraction (Gaut, Sun et al., ACL 2020):
sentences from English Wikipedia articles about people, labelled by distant supervision from
DBpedia with the relations `spouse`, `hypernym`, `birthDate`, `birthPlace`, and `NA`. The test set
is split by the gender of the article's subject (`male_test`, `female_test`), so that a relation
extractor's F1 gap between the two shows gender bias.

```python
import datasets
ds = datasets.load_dataset("path/to/this/folder")                 # config "sentences"
ents = datasets.load_dataset("path/to/this/folder", "entities")   # one row per person
```
"""

_CONFIGURATIONS = """
## Configurations

- `sentences` (default): one row per (head entity, relation, sentence). `relation` and `gender`
  are `ClassLabel`s (`NA` is class 0). `tokens` are the released space-separated tokens (tokens
  glued across a sentence boundary, such as `Ohio.Ritchie`, are split). `head_span`/`tail_span`
  are **token** spans `[start, end)` recomputed by this toolkit; `[-1, -1]` marks a mention that
  could not be located, and `head_match`/`tail_match` name the rule that located each mention
  (`full`, `full_fold`, `no_paren`, `comma_part`, `name_part`, `inflected`, `date`,
  `date_partial`, `year`, `none`). `sentence_id` is shared by the same sentence of the same
  article (a sentence can express several relations). `source` is `distant` or `annotated`
  (relabelled by human annotators).
- `entities`: one row per head entity with its relations, tails, sentences and the release's
  original character `positions`, kept verbatim: lossless with respect to the source.
"""

_BUILD_CONFIGURATIONS = """
## Configurations

- `sentences` (default): one row per (head entity, relation, sentence). `relation` and `gender`
  are `ClassLabel`s (`NA` is class 0). `text` is a sentence of the person's Wikipedia article as
  `wgb data build` wrote it: wikitext cleaned (templates, references, tables and lists dropped, link
  anchors kept), split into sentences and tokenized by the build's rules, tokens joined by spaces;
  `tokens` are those tokens (words keep inner hyphens, dashes, apostrophes and dots; punctuation
  and a possessive 's are tokens of their own). `head_span`/`tail_span` are **token** spans
  `[start, end)` found by the rules that selected the sentence; `[-1, -1]` marks a mention that
  could not be located, and `head_match`/`tail_match` name the rule that located each mention
  (`full`, `full_fold`, `no_paren`, `comma_part`, `name_part`, `inflected`, `date`,
  `date_partial`, `year`, `none`). `sentence_id` is shared by the same sentence of the same
  article (a sentence can express several relations). `source` is `distant` or `annotated`
  (relabelled by human annotators).
- `entities`: one row per head entity with its relations, tails and sentences. `positions` is an
  empty list for every relation: a build has no character offsets; the mentions are the token
  spans of the `sentences` configuration.
"""

_OTHER_CONFIGURATIONS = """
## Configurations

- `sentences` (default): one row per (head entity, relation, sentence). `relation` and `gender`
  are `ClassLabel`s (`NA` is class 0). `tokens` are the space-separated tokens of `text` (tokens
  glued across a sentence boundary, such as `Ohio.Ritchie`, are split). `head_span`/`tail_span`
  are **token** spans `[start, end)` located by this toolkit; `[-1, -1]` marks a mention that
  could not be located, and `head_match`/`tail_match` name the rule that located each mention.
  `source` is `distant` or `annotated` (relabelled by human annotators).
- `entities`: one row per head entity with its relations, tails, sentences and the character
  `positions` its records came with (empty lists where they had none).
"""

#: The known defects of the release (after their heading, :data:`_DEFECTS`).
_RELEASE_DEFECTS = """
- Labels come from distant supervision: a sentence that mentions both the person and the tail is
  taken to express the relation, which is often wrong (e.g. a birth place that is only mentioned
  as a later residence). The paper's human annotation of the test sets found 84% pairwise
  agreement and Fleiss' kappa 0.44.
- Sentence splitting errors of the source ("...Ohio.Ritchie married ...") remain in `text`.
- `NA` examples are few (sentences mentioning a parent, death date or alma mater) and most
  entities have none.
- Mentions by pronoun only ("She married ...") are not located; head spans are missing mostly in
  such sentences.
- Hypernyms come from the Linked Hypernyms Dataset and include noise such as "United" or a
  surname.
"""

#: Known defects of a folder that is neither the release nor a build.
_OTHER_DEFECTS = """
- Labels come from distant supervision unless `source` is `annotated`: a sentence that mentions
  both the person and the tail is taken to express the relation, which is often wrong.
"""

#: The release's person-level groups; the block's body is written by ``scripts/readme_tables.py``
#: from ``results/groups/release/cells.json`` (computed by ``scripts/groups_release.py``).
_GROUPS = """
## Groups: gender x birth era, gender x region

Every person has exactly one birthDate and one birthPlace fact; `wgb data groups` derives birth
eras and birthplace regions from them (`wikigenderbias.groups`; rules, provenance of the gazetteer
and the Global North/South mapping in `wikigenderbias/resources/GAZETTEER.md`).

<!-- BEGIN generated:groups-release -->
(the cell counts: `python scripts/readme_tables.py` writes them from `results/groups/release/cells.json`)
<!-- END generated:groups-release -->
"""

_BIAS = """
## Bias, risks and limitations

The benchmark exists to measure bias, and carries the biases of its sources: Wikipedia has far
fewer and differently written articles about women (female articles mention spouses much more
often), DBpedia records gender as a binary attribute, and the paper assumes binary gender. The
male/female ratio of the training split is {ratio}.
Results on this benchmark say nothing about non-binary people, and a small F1 gap here does not
show that a model is fair elsewhere.
"""

#: The sections from the personal information on to the citation.
_ABOUT = """
## Personal and sensitive information

All text is from public Wikipedia articles about notable people and names real persons, their
spouses, dates and places of birth. Gender labels are DBpedia's, not self-identified. Do not use
this data to infer attributes of individuals.

## Licence

The sentences are from English Wikipedia, licensed CC BY-SA 3.0 (attribution: the Wikipedia
contributors of each article); relations are from DBpedia (CC BY-SA 3.0). Redistribution must keep
this licence and attribution.

## Citation

"""


def _fingerprint_note(fp: dict[str, Any] | None) -> str:
    """The data fingerprint, under the usage example (nothing without a fingerprint)."""
    return ("\nData fingerprint (sha256 over the data files):\n"
            f"`{fp['sha256']}`.\nThe size and sha256 of every data file are in the "
            "YAML `dataset_info` (and in `report.json`);\n`datasets` keys its cache on that YAML, so a "
            "folder holding other data gets its own cache entry.\n" if fp else "")


def _statistics(counts: dict[str, Any]) -> str:
    """Entities by gender and sentences by relation, per split."""
    rows = []
    for s in SPLITS:
        c = counts.get(s)
        if not c:
            continue
        g = c["entities_by_gender"]
        rows.append([s, c["entities"], g.get("female", 0), g.get("male", 0), c["sentences"]]
                    + [c["sentences_by_relation"].get(r, 0) for r in RELATIONS])
    stats = _table(["split", "entities", "female", "male", "sentences", *RELATIONS], rows)
    return f"\n## Statistics\n\n{stats}\n"


def _located_mentions(spans: dict[str, Any]) -> str:
    """How often head and tail mentions were located: overall, and per relation and gender."""
    span_rows = []
    per_rel = spans.get("per_relation_gender", {})
    for rel in sorted(per_rel, key=lambda r: RELATIONS.index(r) if r in RELATIONS else len(RELATIONS)):
        per_g = per_rel[rel]  # in RELATIONS order, also when the report was read back from report.json
        for g in GENDERS:
            b = per_g.get(g)
            if b:
                span_rows.append([rel, g, b["rows"], f'{b["head_rate"]:.1%}', f'{b["tail_rate"]:.1%}',
                                  f'{b["both_rate"]:.1%}', b["rows"] - b["both_located"]])
    span_table = _table(["relation", "gender", "rows", "head located", "tail located", "both", "rows not fully located"],
                        span_rows)
    total = spans.get("total", {})
    return f"""
## Located mentions

Mentions were located in {total.get("both_rate", 0):.1%} of all rows (head {total.get("head_rate", 0):.1%},
tail {total.get("tail_rate", 0):.1%}). Rows whose mention could not be located are kept with span
`[-1, -1]`: models that need positions should skip them (and say how many they skipped).

{span_table}
"""


def card_description(card_text: str) -> str | None:
    """The "How it was built" text of a card written by :func:`render_card` (None if absent)."""
    start = card_text.find(_BUILT)
    end = card_text.find(_DEFECTS, start + 1)
    if start < 0 or end < 0:
        return None
    return card_text[start + len(_BUILT):end]


def refresh_card(folder: str | os.PathLike, *, description: str | None = None) -> dict[str, Any]:
    """Recompute the fingerprint of ``folder``'s data files and rewrite ``report.json`` and the
    card (``README.md``) with it; the data files are not touched. ``description`` defaults to the
    card's own "How it was built" text, else the report's ``description``. Returns the fingerprint.

    For folders written before cards carried a fingerprint, or whose data files were replaced.
    The data files are checked against the dataset's features first
    (:func:`wikigenderbias.validate.check_data_files`): a fingerprint is recorded only for data a
    loader can use."""
    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wgbcore.fileio import reading
    from wikigenderbias.validate import check_data_files

    folder = Path(folder)
    check_data_files(folder)
    card, report_file = folder / "README.md", folder / "report.json"
    report = {}
    if report_file.is_file():
        with reading(report_file, "report.json"):
            report = json.loads(report_file.read_text(encoding="utf-8"))
        if not isinstance(report, dict):
            raise ValueError(f"{report_file}: expected a JSON object")
    if description is None:
        description = card_description(card.read_text(encoding="utf-8")) if card.is_file() else None
    if description is None:
        description = report.get("description", f"Benchmark folder {folder.name}.")
    report["fingerprint"] = fingerprint(folder)
    atomic_write_json(report_file, report, indent=2, sort_keys=True)
    atomic_write_text(card, render_card(description=description, report=report))
    return report["fingerprint"]
