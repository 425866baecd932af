"""Known-answer calibration of the design layer's tests at the levels they are used at.

Simulates studies of the model in :mod:`wgbstats.calibration` (the seed-dominated case, a mixed
case, persons dominating, a heavy seed x person interaction) with 3, 5 and 10 seeds at the committed
person counts (the annotated test persons: 255 men, 268 women; all persons: 3,665 men, 1,504
women, from the cross-fitted runs' ``entity_counts.npz``), and writes, for the layer's test and for
the plug-in Welch-Satterthwaite t test it replaced, the share of true nulls rejected at alpha,
Holm's first steps for the committed families (alpha/13, alpha/28) and intersection-union claims
(alpha/(28 x 3), alpha/(28 x 21)); the 95% interval's coverage; and power curves at alpha/28.

    python scripts/study/calibration.py [--sims 100000] [--sims-all 20000] [--out results/calibration]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from wgbstats.calibration import SCENARIOS, binomial_upper, coverage, simulate, true_se
from wgbcore.atomicio import atomic_savefig, atomic_write_json, atomic_write_text

ALPHA = 0.05
LEVELS = {"alpha": ALPHA, "alpha/13": ALPHA / 13, "alpha/28": ALPHA / 28, "alpha/(28x3)": ALPHA / 84,
          "alpha/(28x21)": ALPHA / 588}
POPULATIONS = {"test persons": (255, 268), "all persons": (3665, 1504)}
SEEDS = (3, 5, 10)
POWER_EFFECTS = (0, 1, 2, 3, 4, 5, 6, 8)      # true gap in true standard errors


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=100_000, help="simulated studies per cell (test persons)")
    ap.add_argument("--sims-all", type=int, default=20_000, help="simulated studies per cell (all persons)")
    ap.add_argument("--power-sims", type=int, default=20_000)
    ap.add_argument("--out", type=Path, default=Path("results/calibration"))
    args = ap.parse_args(argv)
    t0 = time.time()
    rows, cov, power = [], [], []
    for pop, (n_m, n_f) in POPULATIONS.items():
        n_sims = args.sims if pop == "test persons" else args.sims_all
        for name, sc in SCENARIOS.items():
            for s in SEEDS:
                sim = simulate(n_sims, seeds=s, n_male=n_m, n_female=n_f, rng=np.random.default_rng([s, n_f, len(name)]),
                               chunk=max(1, 4_000_000 // (s * (n_m + n_f))), **sc)
                for label, lev in LEVELS.items():
                    k = int(sim.rejects(lev).sum())
                    kp = int(sim.rejects_plugin(lev).sum())
                    rows.append({"population": pop, "scenario": name, "seeds": s, "level": label, "alpha": lev,
                                 "n_sims": n_sims, "rejections": k, "rate": k / n_sims, "ratio": k / n_sims / lev,
                                 "upper_99.9": binomial_upper(k, n_sims), "plugin_rejections": kp,
                                 "plugin_ratio": kp / n_sims / lev})
                cov.append({"population": pop, "scenario": name, "seeds": s, "n_sims": n_sims,
                            "coverage_95": coverage(sim, 0.0), "median_plugin_df": float(np.median(sim.df))})
                print(f"{pop} {name} S={s}: {time.time() - t0:.0f} s", flush=True)
    n_m, n_f = POPULATIONS["test persons"]
    for name in ("seed-dominated", "persons-dominated"):
        sc = SCENARIOS[name]
        for s in SEEDS:
            se = true_se(seeds=s, n_male=n_m, n_female=n_f, **sc)
            for k in POWER_EFFECTS:
                sim = simulate(args.power_sims, seeds=s, n_male=n_m, n_female=n_f, delta=k * se,
                               rng=np.random.default_rng([s, k, 7]), chunk=2000, **sc)
                power.append({"scenario": name, "seeds": s, "effect_in_se": k, "effect": k * se,
                              "power_alpha/28": float(sim.rejects(ALPHA / 28).mean()),
                              "plugin_power_alpha/28": float(sim.rejects_plugin(ALPHA / 28).mean())})
    argv = sys.argv[1:] if argv is None else argv
    meta = {"command": "python scripts/study/calibration.py " + " ".join(argv), "seconds": time.time() - t0,
            "host": platform.node(), "cpu_count": os.cpu_count(), "loadavg_end": list(os.getloadavg()),
            "scenarios": SCENARIOS, "populations": {k: {"men": v[0], "women": v[1]} for k, v in POPULATIONS.items()},
            "levels": LEVELS, "sims": {"test persons": args.sims, "all persons": args.sims_all, "power": args.power_sims}}
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out / "calibration.json", {"meta": meta, "type_i": rows, "coverage": cov, "power": power})
    atomic_write_text(args.out / "calibration.md", render(rows, cov, power, meta))
    plot(rows, power, args.out / "calibration.png")


def render(rows, cov, power, meta) -> str:
    out = ["# Calibration of the design layer's tests (known answers)", "",
           f"Written by `{meta['command'].strip()}` ({meta['seconds']:.0f} s on {meta['host']}). Each cell: "
           "rejections of a true null per nominal level (1.00 = nominal; the upper 99.9% Clopper-Pearson "
           "bound of the rate over the level in brackets); `plug-in`: the Welch-Satterthwaite t test the layer no "
           "longer uses.", ""]
    labels = list(LEVELS)
    for pop in POPULATIONS:
        out += [f"## {pop} ({meta['sims'][pop]} simulated studies per row)", "",
                "| scenario | seeds | " + " | ".join(labels) + " | plug-in at alpha/28 | plug-in at alpha/(28x21) | 95% coverage |",
                "|---|---|" + "---|" * (len(labels) + 3)]
        for name in SCENARIOS:
            for s in SEEDS:
                rs = {r["level"]: r for r in rows if r["population"] == pop and r["scenario"] == name and r["seeds"] == s}
                c = next(x for x in cov if x["population"] == pop and x["scenario"] == name and x["seeds"] == s)
                cells = [f"{rs[l]['ratio']:.2f} ({rs[l]['upper_99.9'] / rs[l]['alpha']:.2f})" for l in labels]
                out.append(f"| {name} | {s} | " + " | ".join(cells) + f" | {rs['alpha/28']['plugin_ratio']:.2f} | "
                           f"{rs['alpha/(28x21)']['plugin_ratio']:.2f} | {c['coverage_95']:.3f} |")
        out.append("")
    out += ["## Power at alpha/28 (test persons)", "", "| scenario | seeds | " +
            " | ".join(f"{k} SE" for k in POWER_EFFECTS) + " |", "|---|---|" + "---|" * len(POWER_EFFECTS)]
    for name in ("seed-dominated", "persons-dominated"):
        for s in SEEDS:
            ps = [p for p in power if p["scenario"] == name and p["seeds"] == s]
            out.append(f"| {name} | {s} | " + " | ".join(f"{p['power_alpha/28']:.2f}" for p in ps) + " |")
    return "\n".join(out) + "\n"


def plot(rows, power, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for ax, s in zip(axes[:2], (3, 10)):
        for name in SCENARIOS:
            rs = [r for r in rows if r["population"] == "test persons" and r["scenario"] == name and r["seeds"] == s]
            ax.plot([r["alpha"] for r in rs], [max(r["ratio"], 1e-3) for r in rs], "o-", label=name)
            ax.plot([r["alpha"] for r in rs], [max(r["plugin_ratio"], 1e-3) for r in rs], "x:", color=ax.lines[-1].get_color())
        ax.axhline(1, color="k", lw=0.8)
        ax.set(xscale="log", yscale="log", xlabel="level", ylabel="type-I rate / level",
               title=f"{s} seeds, test persons (o: the layer's test; x: plug-in t)")
        ax.legend(fontsize=7)
    ax = axes[2]
    for name, style in (("seed-dominated", "-"), ("persons-dominated", "--")):
        for s in SEEDS:
            ps = [p for p in power if p["scenario"] == name and p["seeds"] == s]
            ax.plot([p["effect_in_se"] for p in ps], [p["power_alpha/28"] for p in ps], style, marker="o",
                    label=f"{name}, {s} seeds")
    ax.set(xlabel="true gap / its true SE", ylabel="power at alpha/28", title="power (test persons)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    atomic_savefig(path, fig, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
