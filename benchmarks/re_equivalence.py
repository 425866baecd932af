"""Equivalence study of a changed path against the old one (issue 39, item 3), trained on the real
benchmark: the CNN/PCNN convolution, ``conv_impl="gather"`` (new) against ``"dense"`` (old, every
committed run), and the RNN/BiRNN recurrence, ``rnn_impl="gather"`` (new) against ``"fused"`` (old,
every committed run); ``--encoders`` picks which (each encoder's own pair of paths).

For every seed and encoder (PCNN+attention, CNN+attention by default) one run per path, the
same config otherwise (the default test protocol: the release's own splits; the trainer's
default epochs and early stopping; 1 torch thread), each evaluated on the test splits. A seed's
two runs are a pair: same initial weights, same bag order and dropout masks; they differ only by
float rounding, which training amplifies. Per quantity (micro F1 of the pooled test splits, the
micro F1 gap and the F1 gap of every positive relation, male - female; for both decision rules),
the paired differences new - old over the seeds give their mean, a 90% two-sided t interval and
the TOST verdict against the margin (default 0.005 F1): **equivalent** when the interval lies
inside (-margin, +margin), which is the two one-sided t tests at 5% each; otherwise **not shown
equivalent**. A path is equivalent when every quantity of the primary rule (argmax, the rule of
the grid's findings) is: an intersection-union test, so no multiplicity correction. Also given
per quantity: the correlation of the paired values and the seeds the TOST would need at the
observed mean and spread (a planning figure, not a verdict).

Resumable: each run lives in ``--runs-dir/<encoder>-attention-<path>-s<seed>`` (a finished run,
marked DONE, is only read; an interrupted one resumes from its checkpoint); the results are
rewritten after every run, so a cut-short study keeps what it has. ``--train-articles N``
(smoke tests only) trains on N sampled training articles; runs with it or with ``--epochs`` go to
a subfolder naming them (``articles500-epochs1``), never mixed with the study's runs.

    python benchmarks/re_equivalence.py                                  # the study (5 seeds, PCNN and CNN)
    python benchmarks/re_equivalence.py --seeds 0-9 --encoders pcnn      # more seeds later: finished runs reused
    python benchmarks/re_equivalence.py --seeds 0 --epochs 1 --train-articles 500 \\
        --runs-dir /tmp/eq/runs --out /tmp/eq/re_equivalence            # a smoke test of the whole chain
    # the recurrent encoders (fused vs gather), into their own results file
    python benchmarks/re_equivalence.py --encoders rnn,birnn --out benchmarks/results/re_equivalence_rnn

Writes ``--out``.json and .md (default ``benchmarks/results/re_equivalence``).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shlex
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PATHS = ("dense", "gather")          # old, new: the convolution's
#: per encoder: the config field that picks its path, and its (old, new) paths
FIELDS = {"pcnn": "conv_impl", "cnn": "conv_impl", "rnn": "rnn_impl", "birnn": "rnn_impl"}
PATHS_OF = {"pcnn": PATHS, "cnn": PATHS, "rnn": ("fused", "gather"), "birnn": ("fused", "gather")}
RULES = ("argmax", "threshold")
PRIMARY_RULE = "argmax"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def parse_seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        a, sep, b = part.partition("-")
        out.extend(range(int(a), int(b) + 1) if sep else [int(a)])
    if not out or len(set(out)) != len(out):
        raise ValueError(f"--seeds: expected distinct seeds like 0-4 or 0,2,5, got {text!r}")
    return out


def run_name(encoder: str, selector: str, path: str, seed: int) -> str:
    return f"{encoder}-{selector}-{path}-s{seed}"


# --------------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------------
def t_quantile(q: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(q, df))


def tost(diffs, margin: float, alpha: float = 0.05) -> dict:
    """Paired differences -> mean, sd, the ``1 - 2 alpha`` two-sided t interval, the two one-sided
    tests' p-values (H0: mean <= -margin; H0: mean >= +margin) and the verdict."""
    from scipy import stats

    d = np.asarray(diffs, dtype=float)
    n = int(d.size)
    out = {"n": n, "mean": float(d.mean()) if n else math.nan, "sd": math.nan, "ci_low": math.nan,
           "ci_high": math.nan, "p_lower": math.nan, "p_upper": math.nan, "margin": margin,
           "confidence": 1 - 2 * alpha}
    if n < 2:
        out["verdict"] = "too few seeds"
        return out
    sd = float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    half = t_quantile(1 - alpha, n - 1) * se
    out.update(sd=sd, ci_low=out["mean"] - half, ci_high=out["mean"] + half)
    if se > 0:
        out["p_lower"] = float(stats.t.sf((out["mean"] + margin) / se, n - 1))
        out["p_upper"] = float(stats.t.cdf((out["mean"] - margin) / se, n - 1))
    else:
        out["p_lower"] = out["p_upper"] = 0.0 if abs(out["mean"]) < margin else 1.0
    out["verdict"] = "equivalent" if (-margin < out["ci_low"] and out["ci_high"] < margin) else "not shown equivalent"
    out["seeds_needed"] = seeds_needed(out["mean"], sd, margin, alpha)
    return out


def seeds_needed(mean: float, sd: float, margin: float, alpha: float = 0.05, limit: int = 10_000) -> int | None:
    """The fewest seeds whose ``1 - 2 alpha`` t interval would fit inside the margin at this mean
    and spread (None: not at this mean, or more than ``limit``)."""
    if not (abs(mean) < margin) or not math.isfinite(sd):
        return None
    if sd == 0:
        return 2
    room = margin - abs(mean)
    n = 2
    while n <= limit:
        if t_quantile(1 - alpha, n - 1) * sd / math.sqrt(n) < room:
            return n
        n = n + 1 if n < 200 else int(n * 1.1)
    return None


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------
def quantities(eval_json: dict) -> dict[str, dict[str, float]]:
    """rule -> {quantity: value}: micro F1 of the pooled test splits, the micro F1 gap and each
    positive relation's F1 gap (male - female)."""
    out: dict[str, dict[str, float]] = {}
    for rule, by_split in eval_json["scores"].items():
        q = {"micro_f1": float(by_split["pooled"]["micro_f1"])}
        for g in eval_json["gaps"][rule]:
            if g["metric"] == "f1":
                q[f"f1_gap:{g['relation']}"] = float(g["gap"])
        out[rule] = q
    return out


def train_and_evaluate(cfg, run_dir: Path, dataset, n_resamples: int, log=print) -> dict:
    """Train (or resume, or read a finished run) and evaluate one run; its record."""
    from relext.evaluation.evaluate import evaluate_run
    from relext.training.train import train

    rec = {"run_dir": str(run_dir), "encoder": cfg.encoder, "selector": cfg.selector, "path": getattr(cfg, FIELDS[cfg.encoder]),
           "seed": cfg.seed}
    was_done = (run_dir / "DONE").exists()
    l0, c0, t0 = _load(), _cpu(), time.perf_counter()
    train(cfg, run_dir, dataset=dataset, progress=False)
    rec.update(trained_now=not was_done, train_wall_s=round(time.perf_counter() - t0, 2),
               train_cpu_s=round(_cpu() - c0, 2), load_before=l0, load_after=_load())
    if not (run_dir / "eval.json").exists():
        t1 = time.perf_counter()
        evaluate_run(run_dir, n_resamples=n_resamples, dataset=dataset)
        rec["eval_wall_s"] = round(time.perf_counter() - t1, 2)
    m = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    epochs = m.get("epochs", [])
    rec.update(epochs_run=m.get("epochs_run"), best_epoch=m.get("best_epoch"), best_validation=m.get("best_score"),
               epoch_train_s=[e.get("train_seconds") for e in epochs],
               epoch_eval_s=[e.get("eval_seconds") for e in epochs], threads=m.get("threads"))
    rec["quantities"] = quantities(json.loads((run_dir / "eval.json").read_text(encoding="utf-8")))
    log(f"{run_dir.name}: {'trained' if rec['trained_now'] else 'read'} ({rec['train_wall_s']} s wall, "
        f"{rec['train_cpu_s']} s CPU, {rec['epochs_run']} epochs, load {rec['load_after']}); "
        f"micro F1 {rec['quantities'][PRIMARY_RULE]['micro_f1']:.4f}")
    return rec


def summarize(runs: list[dict], encoders: list[str], margin: float, alpha: float) -> dict:
    """Per encoder and rule, per quantity: the paired differences new - old over the seeds with
    both runs finished, and their TOST."""
    out: dict = {}
    for enc in encoders:
        by = {(r["seed"], r["path"]): r for r in runs if r["encoder"] == enc}
        old_p, new_p = PATHS_OF[enc]
        seeds = sorted({s for s, p in by if (s, old_p) in by and (s, new_p) in by})
        out[enc] = {"seeds": seeds}
        for rule in RULES:
            names = sorted({k for s in seeds for p in (old_p, new_p) for k in by[(s, p)]["quantities"].get(rule, {})},
                           key=lambda k: (k != "micro_f1", k != "f1_gap:micro", k))
            rows = []
            for name in names:
                old = [by[(s, old_p)]["quantities"][rule][name] for s in seeds]
                new = [by[(s, new_p)]["quantities"][rule][name] for s in seeds]
                diff = [b - a for a, b in zip(old, new)]
                res = tost(diff, margin, alpha)
                corr = float(np.corrcoef(old, new)[0, 1]) if len(seeds) > 2 and np.std(old) > 0 and np.std(new) > 0 \
                    else math.nan
                rows.append({"quantity": name, "old": old, "new": new, "diff": diff,
                             "old_mean": float(np.mean(old)) if old else math.nan,
                             "new_mean": float(np.mean(new)) if new else math.nan, "correlation": corr, **res})
            verdicts = [r["verdict"] for r in rows]
            overall = ("equivalent" if rows and all(v == "equivalent" for v in verdicts)
                       else "too few seeds" if not rows or "too few seeds" in verdicts else "not shown equivalent")
            out[enc][rule] = {"quantities": rows, "verdict": overall}
        out[enc]["verdict"] = out[enc][PRIMARY_RULE]["verdict"] if PRIMARY_RULE in out[enc] else "too few seeds"
    return out


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------
def _f(x, fmt="+.4f") -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, fmt)


def render_md(r: dict) -> str:
    a = r["args"]
    lines = [
        "# re_equivalence: " + "; ".join(f"{e}: {PATHS_OF[e][1]} (new) against {PATHS_OF[e][0]} (old)"
                                          for e in a["encoders"]), "",
        f"Command: `{r['command']}`. {a['threads']} torch thread(s) on {r['machine']['cpu_count']} cores "
        f"({r['machine']['cpu']}), torch {r['machine']['torch']}, Python {r['machine']['python']}; started "
        f"{r['started']}, {'finished ' + r['finished'] if r.get('finished') else 'running (or cut short)'}; load "
        f"average (1/5/15 min) {r['load_start']} at the start, {r.get('load_end')} at the end.",
        "",
        f"Protocol: {r['protocol']}. Seeds {a['seeds']}, encoders {a['encoders']} + {a['selector']}, epochs "
        f"{a['epochs'] or 'the trainer default'}" + (f", **{a['train_articles']} sampled training articles only "
                                                     "(a smoke test, not the study)**" if a["train_articles"] else "")
        + f". Margin {a['margin']} F1; interval {1 - 2 * a['alpha']:.0%} two-sided t (= two one-sided tests at "
        f"{a['alpha']:.0%}); paired differences new - old over the seeds.",
        "",
    ]
    for enc, res in r["summary"].items():
        lines += [f"## {enc} + {a['selector']}: **{res['verdict']}** ({PRIMARY_RULE} rule; {len(res['seeds'])} "
                  f"paired seed(s): {res['seeds']})", ""]
        for rule in RULES:
            if rule not in res:
                continue
            lines += [f"### {rule} rule: {res[rule]['verdict']}", "",
                      "| quantity | old mean | new mean | mean diff | 90% interval | sd of diff | corr(old, new) | "
                      "TOST | seeds needed |", "|---|---|---|---|---|---|---|---|---|"]
            for q in res[rule]["quantities"]:
                lines.append(
                    f"| {q['quantity']} | {_f(q['old_mean'], '.4f')} | {_f(q['new_mean'], '.4f')} | {_f(q['mean'])} | "
                    f"[{_f(q['ci_low'])}, {_f(q['ci_high'])}] | {_f(q['sd'], '.4f')} | {_f(q['correlation'], '.2f')} | "
                    f"{q['verdict']} | {q.get('seeds_needed') or '-'} |")
            lines.append("")
    lines += ["## Runs", "",
              "| run | trained here | epochs (best) | train wall s | train CPU s | mean epoch train s | load before | "
              "load after |", "|---|---|---|---|---|---|---|---|"]
    for run in r["runs"]:
        ep = [x for x in run.get("epoch_train_s", []) if x is not None]
        lines.append(f"| {Path(run['run_dir']).name} | {run['trained_now']} | {run['epochs_run']} ({run['best_epoch']}) | "
                     f"{run['train_wall_s']} | {run['train_cpu_s']} | {_f(float(np.mean(ep)) if ep else None, '.2f')} | "
                     f"{run['load_before']} | {run['load_after']} |")
    t = r.get("timing", {})
    if t:
        per = t.get("by_encoder", {"": {"mean_epoch_train_s": t.get("mean_epoch_train_s", {}),
                                        "epoch_ratio": t.get("epoch_ratio")}})
        lines += ["", "Per path, mean epoch training time of the runs trained here: "
                  + "; ".join((f"{enc}: " if enc else "")
                              + ", ".join(f"{p} {v:.2f} s" for p, v in e["mean_epoch_train_s"].items())
                              + (f" (old / new {e['epoch_ratio']:.2f}x)" if e.get("epoch_ratio") else "")
                              for enc, e in per.items())
                  + f"; runs left: {t.get('runs_left', 0)}."]
    lines += ["", "Seeds needed: the fewest paired seeds whose 90% interval would fit inside the margin if the "
              "mean and sd of the differences stayed as observed (a planning figure; '-' when the observed mean "
              "is outside the margin or fewer than 2 seeds)."]
    return "\n".join(lines) + "\n"


def write(results: dict, out: Path) -> None:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    results["load_end"] = _load()
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out.with_suffix(".json"), results)
    atomic_write_text(out.with_suffix(".md"), render_md(results))


def timing(runs: list[dict], planned: int) -> dict:
    """Per encoder and path, the mean epoch training time of the runs trained here; old / new."""
    by: dict = {}
    for enc in dict.fromkeys(r["encoder"] for r in runs):
        mean = {}
        for p in PATHS_OF[enc]:
            ep = [x for r in runs if r["encoder"] == enc and r["path"] == p and r["trained_now"]
                  for x in r["epoch_train_s"] if x is not None]
            if ep:
                mean[p] = float(np.mean(ep))
        by[enc] = {"mean_epoch_train_s": mean}
        if len(mean) == 2:
            by[enc]["epoch_ratio"] = mean[PATHS_OF[enc][0]] / mean[PATHS_OF[enc][1]]
    return {"by_encoder": by, "runs_left": planned - len(runs)}


# --------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0-4", help="paired seeds, e.g. 0-4 or 0,2,5 (default 0-4)")
    ap.add_argument("--encoders", default="pcnn,cnn",
                    help="comma-separated: pcnn, cnn (conv_impl), rnn, birnn (rnn_impl) (default pcnn,cnn)")
    ap.add_argument("--selector", default="attention")
    ap.add_argument("--epochs", type=int, default=None, help="maximum epochs per run (default: the trainer's)")
    ap.add_argument("--train-articles", type=int, default=None,
                    help="train on this many sampled training articles only (smoke tests; a subfolder of --runs-dir)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--margin", type=float, default=0.005, help="equivalence margin, F1 (default 0.005)")
    ap.add_argument("--alpha", type=float, default=0.05, help="level of each one-sided test (default 0.05)")
    ap.add_argument("--n-resamples", type=int, default=1000,
                    help="entity bootstrap resamples of each run's evaluation (its intervals; the point values "
                         "compared here do not depend on it)")
    ap.add_argument("--runs-dir", default=str(ROOT / "runs" / "re_equivalence"))
    ap.add_argument("--out", default=str(HERE / "results" / "re_equivalence"))
    args = ap.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        ap.error(str(exc))
    encoders = [e.strip() for e in args.encoders.split(",") if e.strip()]
    if not encoders or any(e not in FIELDS for e in encoders):
        ap.error(f"--encoders: some of {sorted(FIELDS)}, got {args.encoders!r}")
    if args.train_articles is not None and args.train_articles < 1:
        ap.error("--train-articles must be >= 1")
    if not 0 < args.alpha < 0.5 or args.margin <= 0:
        ap.error("--alpha must be in (0, 0.5) and --margin > 0")

    import torch

    torch.set_num_threads(args.threads)
    from relext.protocols.data import load_dataset_dict
    from relext.training.train import TrainConfig

    runs_dir = Path(args.runs_dir)
    if args.train_articles or args.epochs is not None:           # never mixed with the study's runs
        runs_dir = runs_dir / "-".join([f"articles{args.train_articles}"] * bool(args.train_articles)
                                       + [f"epochs{args.epochs}"] * (args.epochs is not None))
    dataset = load_dataset_dict(None, None)
    if args.train_articles:
        from wgbstudies.debias import subsample_train

        dataset = subsample_train(dataset, args.train_articles, seed=0)
    results = {
        "benchmark": "re_equivalence", "command": "python " + shlex.join([sys.argv[0], *(argv or sys.argv[1:])]),
        "args": {**vars(args), "seeds": seeds, "encoders": encoders},
        "protocol": "the default test protocol (the release's own train / validation / male_test / female_test "
                    "splits; model selection and early stopping on validation), WikiGenderBias embedded release",
        "machine": {"cpu_count": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
                    "platform": platform.platform(), "torch": torch.__version__, "python": platform.python_version(),
                    "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")},
        "started": time.strftime("%Y-%m-%d %H:%M:%S"), "load_start": _load(), "runs": [],
    }
    out = Path(args.out)
    plan = []
    for seed in seeds:                        # seed-major; the order of the two paths alternates
        for i, enc in enumerate(encoders):
            order = PATHS_OF[enc] if (seed + i) % 2 == 0 else PATHS_OF[enc][::-1]
            plan += [(enc, seed, p) for p in order]
    kw = {} if args.epochs is None else {"epochs": args.epochs}
    for enc, seed, path in plan:
        cfg = TrainConfig(encoder=enc, selector=args.selector, seed=seed, threads=args.threads,
                          **{FIELDS[enc]: path}, **kw)
        rec = train_and_evaluate(cfg, runs_dir / run_name(enc, args.selector, path, seed), dataset,
                                 args.n_resamples, log=lambda s: print(s, flush=True))
        results["runs"].append(rec)
        results["summary"] = summarize(results["runs"], encoders, args.margin, args.alpha)
        results["timing"] = timing(results["runs"], len(plan))
        write(results, out)
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write(results, out)
    print(out.with_suffix(".md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":  # datasets may spawn workers: guard the entry point
    sys.exit(main())
