"""Is name anonymization blind to the gold relation? Measured on the real benchmark.

For the anonymizer of this checkout and for the one before issue #19 (which read ``relation`` to
decide which tails become E2 and which are protected; taken from git at ``--old-commit``), the
whole embedded release is anonymized twice: as it is, and with the relation labels of the test
splits scrambled (every label replaced by another, seeded). Counted: test rows whose anonymized
text, head, tail or spans differ between the two (label-blind: 0). Also, as a diagnostic read
*after* anonymizing, how often each gold relation's tail was judged a person (replaced by a label).

    python scripts/study/anonymize_label_blind.py            # -> results/re_debias/anonymize_label_blind.{json,md}

Uses the configured NER (``auto``: the installed spaCy pipeline; its cache makes reruns fast).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TEST = ("male_test", "female_test")
VIEW = ("tokens", "head", "tail", "head_span", "tail_span")


def scramble(ds, seed: int):
    from datasets import DatasetDict

    rng = np.random.default_rng(seed)
    out = {}
    for split, d in ds.items():
        if split in TEST:
            k = len(d.features["relation"].names)
            new = [int((r + 1 + rng.integers(0, k - 1)) % k) for r in d["relation"]]
            d = d.remove_columns("relation").add_column("relation", new).cast(d.features)
        out[split] = d
    return DatasetDict(out)


def old_anonymizer(commit: str):
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:relext/debias/anonymize.py"],
                         check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "anonymize_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("anonymize_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["anonymize_old"] = mod
    spec.loader.exec_module(mod)
    return mod.Anonymize


def changed_rows(a, b) -> dict[str, int]:
    return {s: sum(any(ra[c] != rb[c] for c in VIEW) for ra, rb in zip(a[s], b[s])) for s in TEST}


def person_tails(orig, anon) -> dict[str, dict[str, float]]:
    out = {}
    names = orig["male_test"].features["relation"].names
    for s in TEST:
        for ro, ra in zip(orig[s], anon[s]):
            rel = names[ro["relation"]]
            c = out.setdefault(rel, Counter())
            c["rows"] += 1
            c["tail_replaced"] += ra["tail"] != ro["tail"] and ra["tail"].startswith("E") and ra["tail"][1:].isdigit()
    return {r: {"rows": c["rows"], "tail_replaced": c["tail_replaced"],
                "share": round(c["tail_replaced"] / c["rows"], 4)} for r, c in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old-commit", default="4d4dec7", help="commit with the anonymizer before #19")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "re_debias" / "anonymize_label_blind")
    args = ap.parse_args()

    import wikigenderbias
    from relext.debias.anonymize import Anonymize

    ds = wikigenderbias.load()
    scr = scramble(ds, args.seed)
    n_test = sum(len(ds[s]) for s in TEST)
    res = {"n_test_rows": n_test, "seed": args.seed, "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    for label, cls in (("label_blind", Anonymize), ("before_19", old_anonymizer(args.old_commit))):
        t0 = time.perf_counter()
        a_obj = cls(progress=False)
        a = a_obj.transform_dataset(ds)
        b = cls(progress=False).transform_dataset(scr)
        res[label] = {"rows_changed_by_scrambling": changed_rows(a, b),
                      "tail_replaced_by_gold_relation": person_tails(ds, a),
                      "ner": a_obj.describe().get("ner_backend"),
                      "seconds": round(time.perf_counter() - t0, 1)}
        print(label, res[label]["rows_changed_by_scrambling"], file=sys.stderr)
    res["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    atomic_write_json(args.out.with_suffix(".json"), res)
    lines = ["# Anonymization and the gold relation labels (real benchmark)", "",
             f"Both test splits ({n_test} rows) anonymized as they are and with every relation label replaced "
             f"by another (seed {args.seed}); rows whose anonymized tokens, head, tail or spans differ. "
             "NER: " + json.dumps(res["label_blind"]["ner"]) + ".", "",
             "| anonymizer | rows changed by scrambling the labels (male_test / female_test) |", "|---|---|"]
    for label in ("before_19", "label_blind"):
        c = res[label]["rows_changed_by_scrambling"]
        lines.append(f"| {label} | {c['male_test']} / {c['female_test']} ({c['male_test'] + c['female_test']} "
                     f"of {n_test}) |")
    lines += ["", "Share of test rows whose tail became a person label, by gold relation (read after "
              "anonymizing, for this table only):", "", "| relation | rows | before #19 | label-blind |", "|---|---|---|---|"]
    for rel, d in res["label_blind"]["tail_replaced_by_gold_relation"].items():
        o = res["before_19"]["tail_replaced_by_gold_relation"][rel]
        lines.append(f"| {rel} | {d['rows']} | {o['share']:.1%} | {d['share']:.1%} |")
    lines += ["", f"Load average {res['loadavg_start']} -> {res['loadavg_end']}; "
              "`python scripts/study/anonymize_label_blind.py`.", ""]
    atomic_write_text(args.out.with_suffix(".md"), "\n".join(lines))


if __name__ == "__main__":
    main()
