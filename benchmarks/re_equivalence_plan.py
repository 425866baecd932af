"""The pre-registered plan of the confirmatory equivalence study of the convolution's gather path
(issue 39, item 3), written BEFORE any of its runs.

The exploratory study (``benchmarks/results/re_equivalence.{json,md}``: PCNN+attention, seeds 0-14,
looked at twice: after the planned 5 seeds and again at 15) did not show every quantity
equivalent. Looking again at 30 of the same seeds would be a third look at data already seen, so
the confirmatory study uses **fresh seeds** (15-44), analysed once, at the planned number:

- claim: PCNN+attention trained with ``conv_impl="gather"`` is equivalent to ``"dense"`` within
  the margin on every quantity of the primary (argmax) rule: micro F1 of the pooled test splits,
  the micro F1 gap and the F1 gap of every positive relation (male - female). An
  intersection-union test: each quantity by two one-sided paired t tests at ``alpha`` (a
  ``1 - 2 alpha`` interval inside the margin), no multiplicity correction;
- seeds: the fixed list below, one paired run per path per seed; one look, when all are done;
  no verdict before (partial results are committed as "runs done k of N, no verdict");
- decision: the gather path becomes the default for PCNN only if the claim holds; otherwise the
  dense path stays the default and the gather path stays opt-in. CNN has no equivalence study yet:
  its default does not change under this plan;
- power, from the exploratory spread (a planning figure): for each quantity, the probability that
  the interval lies inside the margin if the paired spread were the exploratory one and the true
  mean difference were 0, or were the exploratory mean (normal approximation of the mean with
  ``se = sd / sqrt(N)``, t quantile for the interval); the joint power is bounded below by the
  Bonferroni bound ``1 - sum(1 - power)``.

    python benchmarks/re_equivalence_plan.py            # writes benchmarks/results/re_equivalence_plan.{json,md}
    # CNN's plan (no CNN runs exist: the spread of PCNN's confirmatory study stands in, said so)
    python benchmarks/re_equivalence_plan.py --encoder cnn --exploratory benchmarks/results/re_equivalence_confirm.json \\
        --planning-encoder pcnn --out benchmarks/results/re_equivalence_cnn_plan

The study itself, after the plan is committed (resumable; runs in ``runs/re_equivalence``)::

    python benchmarks/re_equivalence.py --encoders pcnn --seeds 15-44 \\
        --out benchmarks/results/re_equivalence_confirm
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from scipy import stats

HERE = Path(__file__).resolve().parent
SEEDS = list(range(15, 45))
MARGIN = 0.005
ALPHA = 0.05
ENCODER = "pcnn"
RULE = "argmax"


def power_at(diff: float, sd: float, n: int, margin: float, alpha: float) -> float:
    """P(the 1 - 2 alpha paired t interval lies inside (-margin, margin)) at a true mean difference
    ``diff`` (normal approximation of the mean, the t quantile for the interval)."""
    se = sd / math.sqrt(n)
    t = float(stats.t.ppf(1 - alpha, n - 1))
    if se == 0:
        return float(abs(diff) < margin)
    hi, lo = (margin - t * se - diff) / se, (-margin + t * se - diff) / se
    return max(0.0, float(stats.norm.cdf(hi)) - float(stats.norm.cdf(lo)))


def power_at_zero(sd: float, n: int, margin: float, alpha: float) -> float:
    return power_at(0.0, sd, n, margin, alpha)


def build(exploratory: dict, encoder: str = ENCODER, planning_encoder: str | None = None,
          source: str = "benchmarks/results/re_equivalence.json (seeds 0-14, seen twice)") -> dict:
    """The plan of ``encoder``'s study; the power from ``planning_encoder``'s paired spread in
    ``exploratory`` (default: the encoder's own)."""
    planning_encoder = planning_encoder or encoder
    summary = exploratory["summary"][planning_encoder][RULE]["quantities"]
    rows = []
    for q in summary:
        diffs = [b - a for a, b in zip(q["old"], q["new"])]
        n0 = len(diffs)
        mean = sum(diffs) / n0
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n0 - 1))
        rows.append({"quantity": q["quantity"], "exploratory_seeds": n0,
                     "exploratory_mean_diff": mean, "exploratory_sd_diff": sd,
                     "power_at_zero": power_at_zero(sd, len(SEEDS), MARGIN, ALPHA),
                     "power_at_exploratory_mean": power_at(mean, sd, len(SEEDS), MARGIN, ALPHA)})
    joint = max(0.0, 1 - sum(1 - r["power_at_zero"] for r in rows))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True,
                            text=True).stdout.strip()
    name = "re_equivalence_confirm" if encoder == "pcnn" else f"re_equivalence_{encoder}"
    label = encoder.upper()
    decision = (f"gather becomes {label}'s default only if the claim holds; otherwise dense stays the default"
                + ("; CNN's default does not change under this plan" if encoder == "pcnn" else ""))
    return {
        "plan": name,
        "written": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "written_at_commit": commit,
        "claim": (f"{encoder}+attention with conv_impl='gather' is equivalent to 'dense' within "
                  f"{MARGIN} F1 on every quantity of the {RULE} rule (intersection-union of "
                  f"paired TOSTs at alpha {ALPHA} each)"),
        "encoder": encoder, "selector": "attention", "rule": RULE,
        "seeds": SEEDS, "margin": MARGIN, "alpha": ALPHA,
        "looks": "one, when all planned seeds are done; none before",
        "decision": decision,
        "exploratory_source": source, "planning_encoder": planning_encoder,
        "command": (f"python benchmarks/re_equivalence.py --encoders {encoder} --seeds {SEEDS[0]}-{SEEDS[-1]} "
                    f"--out benchmarks/results/{name}"),
        "power": rows, "joint_power_lower_bound": joint,
    }


def markdown(p: dict) -> str:
    lines = [
        f"# Plan: confirmatory equivalence study of the convolution's gather path ({p['encoder'].upper()})", "",
        f"Written {p['written']} at commit `{p['written_at_commit'][:10]}`, before any of its runs.", "",
        f"- **Claim**: {p['claim']}.",
        f"- **Seeds**: {p['seeds'][0]}-{p['seeds'][-1]} ({len(p['seeds'])} fresh paired seeds"
        + ("; seeds 0-14 were the exploratory study, looked at twice, and are not reused)." if p["encoder"] == "pcnn"
           else f"; no {p['encoder'].upper()} run of either path exists yet)."),
        f"- **Looks**: {p['looks']}.",
        f"- **Decision**: {p['decision']}.",
        f"- **Command**: `{p['command']}`.", "",
        "## Power (exploratory spread; planning figures, not verdicts)", "",
        *([f"No {p['encoder'].upper()} runs exist: the paired spread of {p['planning_encoder'].upper()}'s study "
           f"(`{p['exploratory_source']}`) stands in for it; the power below is what it would be if "
           f"{p['encoder'].upper()}'s spread were the same.", ""] if p.get("planning_encoder", p["encoder"]) != p["encoder"] else []),
        "| quantity | exploratory mean diff | exploratory sd of diff | power at a true diff of 0, N = "
        f"{len(p['seeds'])} | power if the true diff were the exploratory mean |",
        "|---|---|---|---|---|",
    ]
    for r in p["power"]:
        lines.append(f"| {r['quantity']} | {r['exploratory_mean_diff']:+.4f} | "
                     f"{r['exploratory_sd_diff']:.4f} | {r['power_at_zero']:.2f} | "
                     f"{r['power_at_exploratory_mean']:.2f} |")
    lines += ["", f"Joint power (all quantities), Bonferroni lower bound: "
              f"**{p['joint_power_lower_bound']:.2f}**. If the true difference of a quantity is "
              "as large as its exploratory mean, its power is the last column's.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exploratory", default=str(HERE / "results" / "re_equivalence.json"))
    ap.add_argument("--out", default=str(HERE / "results" / "re_equivalence_plan"))
    ap.add_argument("--encoder", default=ENCODER, choices=["pcnn", "cnn"])
    ap.add_argument("--planning-encoder", default=None, help="whose paired spread gives the power (default: --encoder)")
    a = ap.parse_args(argv)
    src = Path(a.exploratory)
    label = f"{src.relative_to(HERE.parent) if src.is_absolute() and HERE.parent in src.parents else src}"
    kw = {} if a.exploratory == ap.get_default("exploratory") else {"source": label}
    plan = build(json.loads(src.read_text()), a.encoder, a.planning_encoder, **kw)
    out = Path(a.out)
    out.with_suffix(".json").write_text(json.dumps(plan, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(plan))
    print(markdown(plan))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
