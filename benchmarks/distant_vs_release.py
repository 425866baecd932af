"""How closely does our distant supervision reproduce the released WikiGenderBias? (real data)

For every head entity of the authors' release, the candidate sentences are all sentences the
release assigns to any of its relations, and the facts are the release's tails. We run
:func:`wikigenderbias.distant.entity_record` on them and compare, per relation, the sentences we
select for (relation, tail) with the ones the release lists:

* recall of release = |ours & release| / |release|
* share of ours in release = |ours & release| / |ours|

Every release sentence the default rules miss is given one cause, the first that applies:

* ``tail_year_only``: (birthDate) no rule finds the date, but its year occurs (the year alone
  selects too many sentences: ``--year-mentions``);
* ``tail_other_word_only``: no rule finds the tail, but a word of it occurs that the rules never
  take alone: a title, particle or territory ("Prince", "of", "Hohenzollern" of "Prince Johann
  Georg of Hohenzollern"), a pronoun of a DBpedia tail such as "his death";
* ``tail_inside_longer_word``: no rule finds the tail, but a word of it occurs inside a longer
  word ("Lu" of "Lu Qing" in "Lucerne", "King" in "Kingdom", "Egypt" in "Egyptians"): the
  release matched tail words as substrings;
* ``tail_absent``: no word of the tail occurs;
* ``tail_shared_name_only``: a person tail named only by words it shares with the head
  ("Liu", for the wife "Liu Xia" of "Liu Xiaobo"): those words name the head;
* ``tail_inside_head``: the tail occurs only inside a mention of the head ("Brittany" in
  "Anne of Brittany", the hypernym "Emperor" in "Qianlong Emperor");
* ``head_pronoun_only``: the head is named only by a pronoun of its gender (kept with
  ``--pronouns``);
* ``head_not_named``: the head is not named at all (kept by the paper's rule, the default);
* ``other``: none of these (a bug if it is not 0).

Hypernyms that are a word of the head's own name ("Ogilvie" of "Lawrence Ogilvie"; noise of
the Linked Hypernyms Dataset whose mentions inside the name are the head's, dropped on purpose) are
counted apart, in the row ``hypernym (name word)``; the ``hypernym`` row holds the others.

Real data: the release as shipped in /work/shared/data (or ``--release PATH``). Results:
benchmarks/results/distant_vs_release.{json,md}.

    python benchmarks/distant_vs_release.py
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import time
from collections import Counter
from pathlib import Path

from wgbcore.atomicio import atomic_write_json, atomic_write_text
from wikigenderbias.dbpedia import PersonFacts
from wikigenderbias.distant import PRONOUNS, DistantConfig, Matcher, Sentence, entity_record
from wikigenderbias.spans import name_word_hypernym, title_forms, usable

HERE = Path(__file__).resolve().parent
RELS = ("spouse", "hypernym", "birthDate", "birthPlace")
NAME_WORD = "hypernym (name word)"
ROWS = (*RELS, NAME_WORD)
SPLITS = ("train", "dev", "male_test", "female_test")
CAUSES = ("tail_year_only", "tail_other_word_only", "tail_inside_longer_word", "tail_absent",
          "tail_shared_name_only", "tail_inside_head", "head_pronoun_only", "head_not_named", "other")
#: Causes where the release took a word of the tail for the tail: inside another word, a word that
#: names no entity on its own, or the surname a spouse shares with the head (which names the head).
RELEASE_WORD_MATCH = ("tail_other_word_only", "tail_inside_longer_word", "tail_shared_name_only")
_WORDS = re.compile(r"[\s,()]+")
#: Recall targets of issue #15 (hypernym without the name-word hypernyms).
TARGETS = {"spouse": 0.95, "hypernym": 0.90, "birthDate": 0.95, "birthPlace": 0.95}
CONFIGS = {"require_head": DistantConfig(require_head=True),
           "require_head_pronouns": DistantConfig(require_head=True, pronouns=True),
           "paper": DistantConfig(require_head=False)}


def _row(head: str, relation: str, tail: str) -> str:
    return NAME_WORD if name_word_hypernym(head, tail, relation) else relation


def _entity(item: dict) -> tuple[PersonFacts, dict[tuple[str, str], list[str]], list[str]]:
    facts = PersonFacts(gender=item["gender_of_entity1"].lower())
    release: dict[tuple[str, str], list[str]] = {}
    sents: list[str] = []
    for r in item["relations"]:
        if r["relation_name"] == "NA" or not r["entity2"]:
            continue
        facts.values(r["relation_name"]).append(r["entity2"])
        release[(r["relation_name"], r["entity2"])] = list(dict.fromkeys(r["sentences"]))
        sents += r["sentences"]
    return facts, release, list(dict.fromkeys(sents))


def cause(head: str, gender: str, relation: str, tail: str, text: str, config: DistantConfig) -> str:
    """Why the rules of ``config`` do not select ``text`` for (relation, tail): see the docstring."""
    s = Sentence(text)
    kinds = config.tail_kinds
    tails = Matcher.for_tail(tail, relation, kinds, head).spans(s)
    if not tails:
        if Matcher.for_tail(tail, relation, kinds).spans(s):
            return "tail_shared_name_only"
        if relation == "birthDate" and Matcher.for_tail(tail, relation, ("year",)).spans(s):
            return "tail_year_only"
        words = [w for w in _WORDS.split(tail) if w]
        if any(w in s.tokens for w in words):
            return "tail_other_word_only"
        return "tail_inside_longer_word" if any(w in text for w in words) else "tail_absent"
    heads = Matcher.for_head(head, config.head_kinds).spans(s)
    titles = Matcher(title_forms(head)).spans(s) if title_forms(head) else []
    heads, tails = usable(heads, tails, titles)
    if not tails:
        return "tail_inside_head"
    if not heads:
        pronouns = set(PRONOUNS.get(gender, ()))
        return "head_pronoun_only" if any(t.lower() in pronouns for t in s.tokens) else "head_not_named"
    return "other"


def compare(items: list[dict], config: DistantConfig, *, causes: bool = False, examples: int = 0) -> dict:
    c: Counter = Counter()
    why: dict[str, Counter] = {r: Counter() for r in ROWS}
    first: dict[str, dict[str, list[str]]] = {r: {} for r in ROWS}
    for it in items:
        facts, release, sents = _entity(it)
        rec = entity_record(it["entity1"], facts, sents, config)
        ours = {(r["relation"], r["tail"]): set(r["sentences"]) for r in (rec or {"relations": []})["relations"]
                if r["relation"] != "NA"}
        for (rel, tail), rel_sents in release.items():
            row = _row(it["entity1"], rel, tail)
            mine = ours.get((rel, tail), set())
            c[row, "release"] += len(rel_sents)
            c[row, "ours"] += len(mine)
            c[row, "both"] += len(mine.intersection(rel_sents))
            if not causes:
                continue
            for text in rel_sents:
                if text not in mine:
                    k = cause(it["entity1"], facts.gender, rel, tail, text, config)
                    why[row][k] += 1
                    ex = first[row].setdefault(k, [])
                    if len(ex) < examples:
                        ex.append(f"{it['entity1']} | {tail} | {text[:200]}")
    out = {}
    for r in ROWS:
        out[r] = {"release": c[r, "release"], "ours": c[r, "ours"], "both": c[r, "both"],
                  "recall_of_release": round(c[r, "both"] / max(c[r, "release"], 1), 4),
                  "share_of_ours_in_release": round(c[r, "both"] / max(c[r, "ours"], 1), 4)}
        if causes:
            out[r]["missed_by_cause"] = {k: why[r][k] for k in CAUSES}
            word = sum(why[r][k] for k in RELEASE_WORD_MATCH)
            # recall among the release's selections that mention the tail itself (not one of its words)
            out[r]["recall_without_release_word_matches"] = round(c[r, "both"] / max(c[r, "release"] - word, 1), 4)
            out[r]["first_examples"] = first[r]
            assert sum(why[r].values()) == c[r, "release"] - c[r, "both"], r
    return out


_CAUSE_TEXT = (
    "Causes, the first that applies (see the module docstring): `tail_year_only` only the birth year occurs; "
    "`tail_other_word_only` only a word of the tail that names nothing alone (\"Prince\", \"of\", a territory, "
    "\"his\" of the DBpedia tail \"his death\"); `tail_inside_longer_word` a word of the tail only inside a longer "
    "word (\"Lu\" in \"Lucerne\", \"King\" in \"Kingdom\", \"S\" in \"Senate\"); `tail_absent` no word of the tail; "
    "`tail_shared_name_only` a spouse named only by the surname it shares with the head, which names the head; "
    "`tail_inside_head` the tail only inside a mention of the head (\"Brittany\" in \"Anne of Brittany\"); "
    "`head_pronoun_only` the person named only by a pronoun (kept with `--pronouns`); `head_not_named` the "
    "person not named at all (kept by the paper's rule, the default); `other` none of these (0 unless the check is wrong). "
    "`tail_other_word_only`, `tail_inside_longer_word` and `tail_shared_name_only` are the release taking a word of "
    "the tail (a substring of the sentence) for the tail; the last column leaves them out of the denominator.")


def markdown(res: dict) -> str:
    lines = ["# distant_vs_release: our distant supervision on the release's candidate sentences", "",
             f"{res['entities']:,} head entities of all four splits of {res['release']} (real data). "
             "For each (relation, tail), ours = the sentences our rules select among all of the entity's "
             "release sentences; release = the sentences the release lists. `hypernym (name word)`: hypernyms "
             "that are a word of the head's own name (LHD noise, their mentions inside the name are the head's), "
             "counted apart from `hypernym`. Configurations: `require_head` (`--require-head`: a sentence must name "
             "the person), `require_head_pronouns` (`--require-head --pronouns`: a pronoun of the person's gender "
             "names the person), `paper` (the default: the paper's rule, any sentence of the article that mentions "
             "the tail).", "",
             "## Recall of the release's selections and why the rest is missed", "",
             "| config | relation | release | recovered | recall | target | " + " | ".join(CAUSES)
             + " | recall without release word matches |",
             "|---|---|---|---|---|---|" + "---|" * len(CAUSES) + "---|"]
    for name, cfg in res["configs"].items():
        for r in ROWS:
            v = cfg["relations"][r]
            target = TARGETS.get(r)
            mark = "-" if target is None else (
                f">= {target:.2f} " + ("met" if v["recall_of_release"] >= target else "**not met**"))
            lines.append(f"| {name} | {r} | {v['release']:,} | {v['both']:,} | {v['recall_of_release']:.3f} | {mark} | "
                         + " | ".join(f"{v['missed_by_cause'][k]:,}" for k in CAUSES)
                         + f" | {v['recall_without_release_word_matches']:.3f} |")
    lines += ["", _CAUSE_TEXT, "",
              "## Precision against the release", "",
              "| config | relation | release | ours | both | recall of release | share of ours in release |",
              "|---|---|---|---|---|---|---|"]
    for name, cfg in res["configs"].items():
        for r, v in cfg["relations"].items():
            lines.append(f"| {name} | {r} | {v['release']:,} | {v['ours']:,} | {v['both']:,} | "
                         f"{v['recall_of_release']:.3f} | {v['share_of_ours_in_release']:.3f} |")
    lines += ["", "Ours outside the release include mentions that the release's case-sensitive word matching missed "
              "(for example \"an American actress\" for the hypernym `Actress`).", "",
              "CPU seconds per configuration (selection and causes): "
              + ", ".join(f"{k} {v['cpu_s']}" for k, v in res["configs"].items())
              + f". Machine load average {tuple(round(x, 2) for x in res['loadavg_before'])} before, "
              f"{tuple(round(x, 2) for x in res['loadavg_after'])} after.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", default="/work/shared/data/wikigenderbias/Wikigender.json.gz")
    ap.add_argument("--results", default=str(HERE / "results" / "distant_vs_release"))
    ap.add_argument("--examples", type=int, default=5, help="first missed sentences kept per cause")
    args = ap.parse_args()
    with gzip.open(args.release, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    items = [it for s in SPLITS for it in data[s]]
    res = {"benchmark": "distant_vs_release", "release": os.path.basename(args.release), "entities": len(items),
           "targets": TARGETS, "loadavg_before": os.getloadavg(), "configs": {}}
    for name, cfg in CONFIGS.items():
        t0 = time.process_time()
        res["configs"][name] = {"config": cfg.to_dict(),
                                "relations": compare(items, cfg, causes=True, examples=args.examples),
                                "cpu_s": round(time.process_time() - t0, 1)}
    res["loadavg_after"] = os.getloadavg()
    atomic_write_json(args.results + ".json", res, indent=2)
    md = markdown(res)
    atomic_write_text(args.results + ".md", md)
    print(md)


if __name__ == "__main__":
    main()
