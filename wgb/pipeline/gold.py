"""The gold knowledge graph: triples of the benchmark's labels for the held-out articles."""
from __future__ import annotations

from typing import Any

from wgb.pipeline.config import TEST_SPLITS


def gold_triples(dataset, splits=TEST_SPLITS) -> list[dict[str, Any]]:
    """Triples of the gold labels (distant supervision / annotation) of ``splits``."""
    from wikigenderbias.schema import GENDERS, RELATIONS

    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for split in splits:
        ds = dataset[split].select_columns(["head", "tail", "relation", "gender", "sentence_id"])
        for row in ds:
            rel = RELATIONS[row["relation"]]
            if rel == "NA" or not row["tail"]:
                continue
            key = (row["head"], rel, row["tail"])
            t = seen.setdefault(key, {"head": row["head"], "relation": rel, "tail": row["tail"], "score": 1.0,
                                      "head_gender": GENDERS[row["gender"]],
                                      "source": {"split": split, "sentence_ids": []}})
            t["source"]["sentence_ids"].append(row["sentence_id"])
    return list(seen.values())
