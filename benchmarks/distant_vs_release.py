"""How closely does our distant supervision reproduce the released WikiGenderBias? (real data)

For every head entity of the authors' release, the candidate sentences are all sentences the
release assigns to any of its relations, and the facts are the release's tails. We run
:func:`wikigenderbias.distant.entity_record` on them and compare, per relation, the sentences we
select for (relation, tail) with the ones the release lists:

* recall of release = |ours & release| / |release|
* share of ours in release = |ours & release| / |ours|

Real data: the release as shipped in /work/shared/data (or ``--release PATH``). Results:
benchmarks/results/distant_vs_release.{json,md}.

    python benchmarks/distant_vs_release.py
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from collections import Counter
from pathlib import Path

from wikigenderbias.dbpedia import PersonFacts
from wikigenderbias.distant import DistantConfig, entity_record

HERE = Path(__file__).resolve().parent
RELS = ("spouse", "hypernym", "birthDate", "birthPlace")
SPLITS = ("train", "dev", "male_test", "female_test")


def compare(items: list[dict], config: DistantConfig) -> dict:
    c: Counter = Counter()
    for it in items:
        pf = PersonFacts(gender=it["gender_of_entity1"].lower())
        release: dict[tuple[str, str], set[str]] = {}
        sents: list[str] = []
        for r in it["relations"]:
            if r["relation_name"] == "NA" or not r["entity2"]:
                continue
            pf.values(r["relation_name"]).append(r["entity2"])
            release[(r["relation_name"], r["entity2"])] = set(r["sentences"])
            sents += r["sentences"]
        rec = entity_record(it["entity1"], pf, list(dict.fromkeys(sents)), config)
        ours = {(r["relation"], r["tail"]): set(r["sentences"]) for r in (rec or {"relations": []})["relations"]
                if r["relation"] != "NA"}
        for key, rel in release.items():
            mine = ours.get(key, set())
            c[key[0], "release"] += len(rel)
            c[key[0], "ours"] += len(mine)
            c[key[0], "both"] += len(rel & mine)
    return {r: {"release": c[r, "release"], "ours": c[r, "ours"], "both": c[r, "both"],
                "recall_of_release": round(c[r, "both"] / max(c[r, "release"], 1), 4),
                "share_of_ours_in_release": round(c[r, "both"] / max(c[r, "ours"], 1), 4)} for r in RELS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", default="/work/shared/data/wikigenderbias/Wikigender.json.gz")
    ap.add_argument("--results", default=str(HERE / "results" / "distant_vs_release"))
    args = ap.parse_args()
    with gzip.open(args.release, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    items = [it for s in SPLITS for it in data[s]]
    res = {"benchmark": "distant_vs_release", "release": os.path.basename(args.release), "entities": len(items),
           "loadavg_before": os.getloadavg(), "configs": {}}
    for name, cfg in (("default", DistantConfig()), ("pronouns", DistantConfig(pronouns=True)),
                      ("head_not_required", DistantConfig(require_head=False))):
        t0 = time.process_time()
        res["configs"][name] = {"config": cfg.to_dict(), "relations": compare(items, cfg),
                                "cpu_s": round(time.process_time() - t0, 1)}
    res["loadavg_after"] = os.getloadavg()
    Path(args.results + ".json").write_text(json.dumps(res, indent=2) + "\n")
    lines = ["# distant_vs_release: our distant supervision on the release's candidate sentences", "",
             f"{res['entities']:,} head entities of all four splits of {res['release']} (real data). "
             "For each (relation, tail), ours = the sentences our rules select among all of the entity's "
             "release sentences; release = the sentences the release lists.", "",
             "| config | relation | release | ours | both | recall of release | share of ours in release |",
             "|---|---|---|---|---|---|---|"]
    for name, c in res["configs"].items():
        for r, v in c["relations"].items():
            lines.append(f"| {name} | {r} | {v['release']:,} | {v['ours']:,} | {v['both']:,} | "
                         f"{v['recall_of_release']:.3f} | {v['share_of_ours_in_release']:.3f} |")
    lines += ["", f"Machine load average {tuple(round(x, 2) for x in res['loadavg_before'])} before, "
                  f"{tuple(round(x, 2) for x in res['loadavg_after'])} after."]
    Path(args.results + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
