"""How often name anonymization splits one gold pair's bag in two.

A bag is the sentences of one (person, tail) pair. The anonymizer replaces a person tail (a
spouse) by its placeholder, or a tail whose whole span lies in a replaced name by that name's
label; when it does so in some sentences of a pair and not in others (NER missed the name
there), the anonymized data hold two bags for one gold pair, and the anonymize arm is scored on
more bags than the other arms. This applies the anonymizer as the studies do, to the embedded
release (the test protocol) and to each of the 5 cross-fitted folds' views (fold seed 0; the
held-out persons counted), and counts, per population and relation, the gold pairs
(``entity_id``, original tail), how many map to more than one anonymized tail (none since
anonymize version 2 decides a tail's personhood per article and tail; version 1's counts are
kept in ``anonymize_bags_v1.json``) and how many lose their tail name in every sentence. The gazetteer
of known names holds the training split's spouse tails, so its persons' spouses are found in
every sentence; held-out spouses rest on NER alone.

    python scripts/study/anonymize_bags.py   # -> results/re_crossfit/anonymize_bags.{json,md}
"""
from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def split_pairs(original, anonymized, population=None, splits=None) -> dict[str, dict[str, dict[str, int]]]:
    """{population: {relation: {pairs, split, merged, replaced}}} over row-aligned original /
    anonymized splits: a gold pair is *split* when its sentences get more than one anonymized tail,
    *merged* when one of its anonymized tails is also another pair's of the article (NA rows
    included), *replaced* when no sentence keeps its tail (``population``: entity_id ->
    population, else the split's; ``splits``: those counted)."""
    from wikigenderbias.schema import RELATIONS

    tails: dict[tuple, set] = defaultdict(set)
    rel_of: dict[tuple, int] = {}
    pop_of: dict[tuple, str] = {}
    sources: dict[tuple, set] = defaultdict(set)   # (article, anonymized tail) -> original tails
    for split in splits or list(original):
        a, b = original[split], anonymized[split]
        if len(a) != len(b):
            raise ValueError(f"{split}: {len(a)} rows before anonymization, {len(b)} after")
        pop = "test" if split.endswith("_test") else "distant"
        for e, t, r, t2 in zip(a["entity_id"], a["tail"], a["relation"], b["tail"]):
            sources[(e, t2)].add(t)
            if r == 0:
                continue
            key = (e, t, r)
            tails[key].add(t2)
            rel_of[key], pop_of[key] = r, (population[e] if population else pop)
    out: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: {"pairs": 0, "split": 0, "merged": 0, "replaced": 0}))
    for key, ts in tails.items():
        c = out[pop_of[key]][RELATIONS[rel_of[key]]]
        c["pairs"] += 1
        c["split"] += len(ts) > 1
        c["merged"] += any(len(sources[(key[0], t2)]) > 1 for t2 in ts)
        c["replaced"] += key[1] not in ts
    return {p: dict(d) for p, d in out.items()}


def main() -> int:
    import wikigenderbias
    from relext.debias.anonymize import Anonymize
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    from relext.protocols.crossfit import FoldSpec, fold_view

    ds = wikigenderbias.load()
    tr = Anonymize(progress=False)
    counts = {"test_protocol": split_pairs(ds, tr.transform_dataset(ds))}
    population = {e: ("test" if s.endswith("_test") else "distant") for s in ds for e in set(ds[s]["entity_id"])}
    total: dict = {}
    spec = FoldSpec(folds=5, fold_seed=0)
    for k in range(spec.folds):
        view = fold_view(ds, k, spec)
        got = split_pairs(view, tr.transform_dataset(view), population, ["male_test", "female_test"])
        for p, d in got.items():
            for r, c in d.items():
                t = total.setdefault(p, {}).setdefault(r, {"pairs": 0, "split": 0, "merged": 0, "replaced": 0})
                for f in t:
                    t[f] += c[f]
    counts["crossfit_held_out"] = total
    res = {"data": "embedded WikiGenderBias release", "anonymizer": tr.describe(),
           "before": {"file": "results/re_crossfit/anonymize_bags_v1.json",
                      "what": "the same counts under anonymize version 1 (personhood per row), commit 063bc04"}, "fold_spec": {"folds": 5, "seed": 0},
           "counts": counts}
    out = ROOT / "results" / "re_crossfit" / "anonymize_bags"
    atomic_write_json(out.with_suffix(".json"), res)
    lines = ["Gold pairs (person, tail) whose sentences the anonymizer gives more than one tail, so that the "
             "anonymize arm scores them as two or more bags (`python scripts/study/anonymize_bags.py`, "
             f"`{out.relative_to(ROOT)}.json`):", "",
             "| protocol | population | relation | gold pairs | split | share | merged with another pair | tail replaced everywhere |",
             "|---|---|---|---|---|---|---|---|"]
    for proto, by in counts.items():
        for p in ("test", "distant"):
            for r, c in sorted(by.get(p, {}).items()):
                lines.append(f"| {proto.replace('_', ' ')} | {p} | {r} | {c['pairs']:,} | {c['split']:,} | "
                             f"{c['split'] / max(c['pairs'], 1):.1%} | {c['merged']:,} | {c['replaced']:,} |")
    atomic_write_text(out.with_suffix(".md"), "\n".join(lines) + "\n")
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
