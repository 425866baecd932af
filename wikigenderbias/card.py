"""The dataset card (README.md with YAML ``configs:``) of a benchmark folder."""
from __future__ import annotations

from typing import Any

import yaml

from wikigenderbias.schema import CONFIGS, GENDERS, RELATIONS, SPLITS, features_for

CITATION = """@inproceedings{gaut-etal-2020-towards,
    title = "Towards Understanding Gender Bias in Relation Extraction",
    author = "Gaut, Andrew and Sun, Tony and Tang, Shirlyn and Huang, Yuxin and Qian, Jing and
              ElSherief, Mai and Zhao, Jieyu and Mirza, Diba and Belding, Elizabeth and
              Chang, Kai-Wei and Wang, William Yang",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "2943--2953",
}"""


def _yaml_header() -> str:
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
        infos.append({"config_name": config, **info})
    header = {
        "language": ["en"],
        "license": "cc-by-sa-3.0",
        "pretty_name": "WikiGenderBias",
        "task_categories": ["text-classification"],
        "tags": ["relation-extraction", "gender-bias", "fairness", "distant-supervision"],
        "configs": configs,
        "dataset_info": infos,
    }
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render_card(*, description: str, report: dict[str, Any]) -> str:
    counts = report.get("counts", {})
    spans = report.get("spans", {})
    rows = []
    for s in SPLITS:
        c = counts.get(s)
        if not c:
            continue
        g = c["entities_by_gender"]
        rows.append([s, c["entities"], g.get("female", 0), g.get("male", 0), c["sentences"]]
                    + [c["sentences_by_relation"].get(r, 0) for r in RELATIONS])
    stats = _table(["split", "entities", "female", "male", "sentences", *RELATIONS], rows)
    span_rows = []
    for rel, per_g in spans.get("per_relation_gender", {}).items():
        for g in GENDERS:
            b = per_g.get(g)
            if b:
                span_rows.append([rel, g, b["rows"], f'{b["head_rate"]:.1%}', f'{b["tail_rate"]:.1%}',
                                  f'{b["both_rate"]:.1%}', b["rows"] - b["both_located"]])
    span_table = _table(["relation", "gender", "rows", "head located", "tail located", "both", "rows not fully located"],
                        span_rows)
    total = spans.get("total", {})
    return f"""{_yaml_header()}
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

## Statistics

{stats}

## Located mentions

Mentions were located in {total.get("both_rate", 0):.1%} of all rows (head {total.get("head_rate", 0):.1%},
tail {total.get("tail_rate", 0):.1%}). Rows whose mention could not be located are kept with span
`[-1, -1]`: models that need positions should skip them (and say how many they skipped).

{span_table}

## How it was built

{description}

## Known defects

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

## Bias, risks and limitations

The benchmark exists to measure bias, and carries the biases of its sources: Wikipedia has far
fewer and differently written articles about women (female articles mention spouses much more
often), DBpedia records gender as a binary attribute, and the paper assumes binary gender. The
male/female ratio of the training split is about 3:1. Results on this benchmark say nothing
about non-binary people, and a small F1 gap here does not show that a model is fair elsewhere.

## Personal and sensitive information

All text is from public Wikipedia articles about notable people and names real persons, their
spouses, dates and places of birth. Gender labels are DBpedia's, not self-identified. Do not use
this data to infer attributes of individuals.

## Licence

The sentences are from English Wikipedia, licensed CC BY-SA 3.0 (attribution: the Wikipedia
contributors of each article); relations are from DBpedia (CC BY-SA 3.0). Redistribution must keep
this licence and attribution.

## Citation

```bibtex
{CITATION}
```
"""
