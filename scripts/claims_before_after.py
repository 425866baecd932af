"""Before/after table of the studies' claims (issue #27 items 6-9): the committed claims of the
debiasing study and of the CNN/PCNN grid as they were (read with ``git show REV:path``) against the
regenerated ones in the working tree. Writes ``results/re_debias/claims_before_after.md``.

    python scripts/claims_before_after.py [--before REV]

``--before`` defaults to ``6e4141d``, the last commit whose study and grid reports predate #27 (the
claims as the audit of #27 read them). Every claim is listed: the corrected interval changed them all.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEFORE = "6e4141d"
OUT = "results/re_debias/claims_before_after.md"
SOURCES = {"debiasing study": ("results/re_debias/study/claims.json", None),
           "CNN/PCNN grid": ("results/re_grid_cnn_pcnn/results.json", "design_report")}

#: old claim -> (new claim, why); an old claim absent here kept its name
RENAMED = {
    "birthDate has the smallest F1 gap": ("Hypernym has the smallest F1 gap",
                                          "the paper says hypernym has the least gap (birthDate: 'very little')"),
    "CDA alone is the best single option (smallest mean |F1 gap|)": (
        "CDA on its own has the smallest mean |F1 gap| of the debiasing options",
        "the paper's wording ('gender-swapping on its own'); an intersection-union test over every other paper "
        "variant instead of the minimum over noisy gaps"),
    "Average shows a smaller spouse gap than attention (cnn)": (
        "Average shows less bias than attention for every encoder except PCNN",
        "the paper's claim: 'for every encoder except PCNN' (mean |F1 gap|; PCNN reported beside)"),
    "Average shows a smaller spouse gap than attention (pcnn)": (
        None, "PCNN is the paper's exception: reported beside the claim, not tested"),
    "Average scores a higher micro F1 than attention (cnn)": (
        "Average scores a higher micro F1 than attention across the board", "'across the board': one "
        "intersection-union claim over the encoders"),
    "Average scores a higher micro F1 than attention (pcnn)": (
        "Average scores a higher micro F1 than attention across the board", "merged into the claim across the board"),
}
WHY_ALL = "interval: interaction counted once, at Holm's level"
WHY = {
    "Spouse has the largest F1 gap": "intersection-union over the other relations instead of the max of noisy gaps",
    "The spouse F1 gap favours male articles under every variant": (
        "paper variants only (controls beside), intersection-union test, each variant on its own seeds"),
    "CDA raises micro F1": "duplicate - none reported beside it (most of the gain is the training budget)",
    "CDA raises micro F1 beyond training as long": "the claim about counterfactual data (CDA vs duplicate)",
}


def _load(rev: str | None, path: str, key: str | None) -> dict:
    text = (subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout if rev else (ROOT / path).read_text())
    d = json.loads(text)
    return d[key] if key else d


def _new_name(old: str) -> tuple[str | None, str]:
    for k, (new, why) in RENAMED.items():
        if old == k:
            return new, why
        if old.startswith(k + " (") and new is not None and k.startswith("birthDate"):
            return new + old[len(k):], why
    return old, ""


def level_text(level: float) -> str:
    from wgbstudies.claims import level_text as text

    return text(level)


def _ci(c: dict) -> str:
    if c.get("ci_adjusted"):
        lo, hi = c["ci_adjusted"]
        return f"[{lo:+.4f}, {hi:+.4f}] ({level_text(c['ci_adjusted_level'])})"
    lo, hi = c["ci"]
    return f"[{lo:+.4f}, {hi:+.4f}] (95%)"


def _halves(h: dict | None) -> str:
    if not h:
        return "-"
    if not h.get("checked", True):
        return f"not checked ({min(h['seeds_per_half'])} seeds in a half)"
    return f"{h['first_half']} / {h['second_half']} ({h['seeds_per_half'][0]}+{h['seeds_per_half'][1]} seeds" + (
        ", persons split)" if "persons_split" in h else ", same persons)")


def _why(new: str | None, renamed_why: str) -> str:
    parts = [renamed_why] if renamed_why else []
    for k, w in WHY.items():
        if new and new.startswith(k) and w not in parts:
            parts.append(w)
    return "; ".join(parts + [WHY_ALL])


def rows(before: dict, after: dict) -> list[list[str]]:
    old = {c["claim"]: c for c in before["claims"]}
    new = {c["claim"]: c for c in after["claims"]}
    oh = {h["claim"]: h for h in before.get("half_split", [])}
    nh = {h["claim"]: h for h in after.get("half_split", [])}
    out, seen = [], set()
    for name, c in old.items():
        target, why = _new_name(name)
        n = new.get(target) if target else None
        if target:
            seen.add(target)
        out.append([name, c["statistic"], c["verdict"], f"{c['value']:+.4f}", _ci(c), _halves(oh.get(name)),
                    target or "(dropped)", n["statistic"] if n else "-", n["verdict"] if n else "-",
                    f"{n['value']:+.4f}" if n else "-", _ci(n) if n else "-", _halves(nh.get(target)) if n else "-",
                    _why(target, why) if n else why])
    for name, n in new.items():
        if name not in seen:
            out.append(["(new)", "-", "-", "-", "-", "-", name, n["statistic"], n["verdict"], f"{n['value']:+.4f}",
                        _ci(n), _halves(nh.get(name)), "a claim of the paper not tested before; " + WHY_ALL])
    return out


def main(argv: list[str] | None = None) -> Path:
    from wgbcore.atomicio import atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help=f"git revision of the old claims (default {BEFORE})")
    args = ap.parse_args(argv)
    head = ["claim before", "statistic before", "verdict before", "effect before", "interval before",
            "halves before", "claim after", "statistic after", "verdict after", "effect after",
            "interval after", "halves after", "what changed"]
    lines = ["# The studies' claims before and after issue #27 (items 6-9)", "",
             f"Generated by `python scripts/claims_before_after.py` from `git show {args.before}:<file>` (before) "
             "and the working tree (after). Effects of an intersection-union claim are its weakest member's "
             "(after); intervals before are the crossed bootstrap's 95% intervals, after the corrected ones at "
             "the level Holm tested the claim at.", ""]
    for study, (path, key) in SOURCES.items():
        before, after = _load(args.before, path, key), _load(None, path, key)
        lines += [f"## {study} (`{path}`)", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(x.replace("|", "\\|") for x in r) + " |" for r in rows(before, after)]
        if key is None and after.get("budget"):
            from wgbstudies.report import budget_sentence

            lines += ["", budget_sentence(after["budget"])]
        lines.append("")
    return atomic_write_text(ROOT / OUT, "\n".join(lines))


if __name__ == "__main__":
    print(main())
