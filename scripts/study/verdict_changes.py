"""Which committed verdicts changed when the inference changed (issue #38), and the paper's claims
against the toolkit's verdicts today.

Reads every committed study's claims table at a base commit (default: ``fdffbb0``, the last commit
before design version 2) with ``git show`` and today's from the working tree, matches claims by
their position in the study's claim list (the specs and their order did not change; a claim renamed
for "one name, one definition" carries the paper's name in ``narrows``), and writes

* ``results/verdicts/changes.{json,md}``: every claim whose verdict changed, with its old and new
  effect, p (Holm) and verdict, and why (design version 2: the studentized p-value against the seed
  reference; an interim look of a pre-registered study; a plan registered after the runs);
* ``results/verdicts/paper_vs_toolkit.md``: the paper's claims (Gaut et al. 2020) as each
  study tests them today: verdict, effect, interval at Holm's level, MDE, seeds x folds, population.

    python scripts/study/verdict_changes.py [--base fdffbb0]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: study -> (claims file, path to the claims dict inside it, seeds x folds in words)
STUDIES = {
    "debiasing study, test protocol": ("results/re_debias/study/claims.json", "", "test protocol"),
    "debiasing study, cross-fitted": ("results/re_crossfit/debias/claims.json", "", "5 folds"),
    "none+cda seeds study, cross-fitted": ("results/re_crossfit/debias_seeds/claims.json", "", "5 folds"),
    "CNN/PCNN grid, test protocol": ("results/re_grid_cnn_pcnn/results.json", "design_report", "test protocol"),
    "CNN/PCNN grid, cross-fitted": ("results/re_crossfit/grid/results.json", "design_report", "5 folds"),
    "eight-combination grid, cross-fitted": ("results/re_crossfit/grid_all/results.json", "design_report", "5 folds"),
}
POP_LABEL = {"main": "test persons", "all": "all persons"}


def _load(text: str | None, key: str) -> dict | None:
    if not text:
        return None
    d = json.loads(text)
    return d.get(key) if key else d


def _views(rep: dict | None) -> dict[str, list[dict]]:
    if not rep:
        return {}
    out = {"main": rep.get("claims") or []}
    for name, v in (rep.get("populations") or {}).items():
        out[name] = v.get("claims") or []
    return out


def _old_text(base: str, path: str) -> str | None:
    r = subprocess.run(["git", "show", f"{base}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def _why(new: dict, rep: dict) -> str:
    v = new["verdict"]
    if v.startswith("interim"):
        return "interim look of a planned sample: no verdict until the planned seeds"
    return "design version 2: p-value studentized against the seed reference (was: percentile replicates beyond 0)"


def compare(base: str) -> tuple[list[dict], list[dict]]:
    changes, rows = [], []
    for study, (path, key, folds) in STUDIES.items():
        old = _load(_old_text(base, path), key)
        new = _load((ROOT / path).read_text(), key)
        label = (new or {}).get("plan_status", {}) if new else {}
        ov, nv = _views(old), _views(new)
        for pop, claims in nv.items():
            before = ov.get(pop, [])
            for i, c in enumerate(claims):
                o = before[i] if i < len(before) else None
                n_folds = "" if folds == "test protocol" else " x 5 folds"
                row = {"study": study, "population": POP_LABEL.get(pop, pop), "claim": c["claim"],
                       "verdict": c["verdict"], "value": c["value"], "ci_adjusted": c.get("ci_adjusted"),
                       "ci_adjusted_level": c.get("ci_adjusted_level"), "p_adjusted": c["p_adjusted"],
                       "mde": c.get("mde"), "seeds": f"{c['n_seeds']} seeds{n_folds}", "source": c.get("source", "")}
                rows.append(row)
                if o is None:
                    continue
                if o["verdict"] != c["verdict"]:
                    changes.append({**row, "old_claim": o["claim"], "old_verdict": o["verdict"],
                                    "old_value": o["value"], "old_p_adjusted": o["p_adjusted"],
                                    "old_n_seeds": o["n_seeds"], "why": _why(c, new)})
    return changes, rows


def _f(x, spec="+.4f"):
    return "-" if x is None else format(x, spec)


def markdown_changes(changes: list[dict], base: str) -> str:
    out = [f"# Verdicts that changed with design version 2", "",
           f"Written by `python scripts/study/verdict_changes.py --base {base}`: every committed claim whose verdict "
           f"differs from the one committed at `{base}` (the last commit before the change), with its old and new "
           "effect and Holm-adjusted p. The effects moved only where the seeds behind a table changed; the "
           "p-values moved because they are now studentized against the seed reference (`relext.design_reference`) "
           "instead of counted from the percentile bootstrap's replicates beyond 0.", "",
           "| study | population | claim | old verdict (p Holm, seeds) | new verdict (p Holm, seeds) | old -> new effect | why |",
           "|---|---|---|---|---|---|---|"]
    for c in changes:
        name = c["claim"] if c["claim"] == c["old_claim"] else f"{c['claim']} (was: {c['old_claim']})"
        out.append(f"| {c['study']} | {c['population']} | {name.replace('|', chr(92) + '|')} | {c['old_verdict']} "
                   f"({c['old_p_adjusted']:.3g}, {c['old_n_seeds']}) | {c['verdict']} ({c['p_adjusted']:.3g}, "
                   f"{c['seeds']}) | {_f(c['old_value'])} -> {_f(c['value'])} | {c['why']} |")
    if not changes:
        out.append("| (none) | | | | | | |")
    return "\n".join(out) + "\n"


def markdown_paper(rows: list[dict]) -> str:
    out = ["# The paper's claims against the toolkit's verdicts", "",
           "Written by `python scripts/study/verdict_changes.py` from the committed claims tables (design version 2). "
           "Each claim as worded and quoted from Gaut et al. (2020) (its source column), tested by each study on "
           "each population; interval at the level Holm tested the claim at; MDE at 80% power at that level; "
           "'interim' rows are planned studies not yet at their planned seeds; 'exploratory' studies registered "
           "their plan after their runs (their `plan.json`).", "",
           "| claim | study | population | verdict | effect [interval at Holm's level] | MDE | seeds x folds |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "Gaut" not in (r["source"] or "") and "paper" not in (r["source"] or "").lower():
            continue
        ci = r["ci_adjusted"]
        ci_t = "" if not ci else f" [{ci[0]:+.4f}, {ci[1]:+.4f}] ({100 * r['ci_adjusted_level']:.4g}%)"
        out.append(f"| {r['claim'].replace('|', chr(92) + '|')} | {r['study']} | {r['population']} | {r['verdict']} | "
                   f"{r['value']:+.4f}{ci_t} | {_f(r['mde'], '.4f')} | {r['seeds']} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="fdffbb0")
    args = ap.parse_args(argv)
    changes, rows = compare(args.base)
    out = ROOT / "results" / "verdicts"
    atomic_write_json(out / "changes.json", {"base": args.base, "changes": changes, "claims": rows})
    atomic_write_text(out / "changes.md", markdown_changes(changes, args.base))
    atomic_write_text(out / "paper_vs_toolkit.md", markdown_paper(rows))
    print(f"{len(changes)} verdicts changed; {len(rows)} claim rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
