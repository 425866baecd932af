"""Power before compute for the RNN/BiRNN arms of the cross-fitted grid (issue #26).

The grid's claims span all eight encoder x selector combinations (the paper's "every encoder
except PCNN", "every combination but RNN+attention"), so RNN and BiRNN join the CNN/PCNN grid
(`wgb re grid --encoders cnn,pcnn,rnn@0-2,birnn@0-2 --seeds 0-4 --protocol crossfit`). No RNN or
BiRNN per-person counts existed before their runs, so this plan stands them in by the committed
cross-fitted fold runs of CNN (for RNN) and PCNN (for BiRNN), seeds 0-2, with CNN and PCNN at
their own seeds 0-4, and computes every claim's minimum detectable effect (80% power, at the
level Holm tests it) with the grid's own design layer. Assumption: the recurrent encoders' seed
and per-person noise are like the convolutional ones'; the measured MDEs replace this plan once
the runs exist. The effects of a stand-in are not RNN's and are not reported.

    python scripts/study/grid_rnn_plan.py   # -> results/re_crossfit/grid_rnn_plan.{json,md}
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
RUNS = "results/re_crossfit/grid/runs"
STAND_IN = {"rnn": "cnn", "birnn": "pcnn"}
OWN_SEEDS, PLANNED_RNN_SEEDS, FOLDS = range(5), range(3), 5


def planned_runs(runs_dir: Path) -> dict[tuple[str, int], list[Path]]:
    """(combo, seed) -> fold run directories: CNN/PCNN's own, RNN/BiRNN's stand-ins."""
    out = {}
    for enc in ("cnn", "pcnn", "rnn", "birnn"):
        src = STAND_IN.get(enc, enc)
        for sel in ("attention", "average"):
            for seed in (PLANNED_RNN_SEEDS if enc in STAND_IN else OWN_SEEDS):
                dirs = [runs_dir / f"{src}-{sel}-seed{seed}-fold{k}" for k in range(FOLDS)]
                missing = [d for d in dirs if not (d / "entity_counts.npz").is_file()]
                if missing:
                    raise SystemExit(f"{missing[0]}: no entity_counts.npz (the CNN/PCNN grid must be finished)")
                out[(f"{enc}-{sel}", seed)] = dirs
    return out


def main() -> int:
    from wgbstudies.claims import grid_design_report
    from wgbcore.atomicio import atomic_write_json, atomic_write_text
    from wgbcore.provenance import provenance

    t0, load = time.perf_counter(), [round(x, 2) for x in os.getloadavg()]
    rep = grid_design_report(planned_runs(ROOT / RUNS), rules=("argmax",))
    pops = {"test": rep} | {k: v for k, v in rep.get("populations", {}).items()}
    rows = []
    for spec_i, c in enumerate(rep["claims"]):
        stand_in = any(e in c["claim"] or e in str(c.get("statistic", "")) for e in ("rnn", "birnn")) \
            or "every" in c["claim"].lower() or "across the board" in c["claim"].lower()
        rows.append({"claim": c["claim"], "involves_stand_ins": stand_in,
                     **{f"mde_{p}": v["claims"][spec_i]["mde"] for p, v in pops.items()},
                     **{f"n_persons_{p}": v["n_persons"] for p, v in pops.items()}})
    res = {"meta": {**provenance(seed=0), "command": "python scripts/study/grid_rnn_plan.py", "runs_dir": RUNS,
                    "stand_in": STAND_IN, "seeds": {"cnn, pcnn": list(OWN_SEEDS), "rnn, birnn": list(PLANNED_RNN_SEEDS)},
                    "folds": FOLDS, "loadavg_before": load, "seconds": round(time.perf_counter() - t0, 1)},
           "assumption": "RNN and BiRNN stood in by CNN and PCNN fold runs (seeds 0-2): their seed and "
                         "per-person noise assumed alike; effects of stand-ins not reported",
           "claims": rows}
    out = ROOT / "results" / "re_crossfit" / "grid_rnn_plan"
    atomic_write_json(out.with_suffix(".json"), res)
    lines = [f"Power plan for RNN/BiRNN in the cross-fitted grid, written by `python scripts/study/grid_rnn_plan.py` before any RNN/BiRNN fold run. {res['assumption']}. "
             "CNN and PCNN at 5 seeds, RNN and BiRNN at 3, 5 folds; MDE at 80% power at the level Holm tests "
             "each claim at (Holm over the grid's claims).", "",
             "| claim | uses stand-ins | MDE, test persons | MDE, all persons |", "|---|---|---|---|"]
    for r in rows:
        mde = lambda k: "-" if r.get(k) is None else f"{r[k]:.4f}"  # noqa: E731
        lines.append(f"| {r['claim'].replace('|', chr(92) + '|')} | {'yes' if r['involves_stand_ins'] else 'no'} | "
                     f"{mde('mde_test')} | {mde('mde_all')} |")
    atomic_write_text(out.with_suffix(".md"), "\n".join(lines) + "\n")
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
