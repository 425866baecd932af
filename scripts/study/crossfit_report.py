"""The debiasing study under both protocols, side by side, from committed results:

- ``results/re_debias/study/claims.json``: the test protocol (the release's 523 annotated test
  persons, 10 seeds for the main arms);
- ``results/re_crossfit/debias/claims.json``: person-level cross-fitting (every person once, K
  fold runs per seed), its claims on the test persons and on all persons;

the same for the CNN/PCNN x attention/average grid (``results/re_grid_cnn_pcnn`` against
``results/re_crossfit/grid``), and the spouse-gap label-noise sensitivity of the cross-fitted runs whose fold predictions are on
this machine (``runs/<run>/predictions``, not committed), for both populations.

    python scripts/study/crossfit_report.py     # -> results/re_crossfit/debias/protocols.{json,md}
                                                #    results/re_crossfit/debias/label_noise_gap.json
                                                #    results/re_crossfit/grid/protocols.{json,md}

Under cross-fitting with fewer than 3 seeds no claim is tested (the seed variance is not
estimable); the table then shows the entity-only interval and the entity-only MDE, a lower bound
of the MDE (the seed part is missing), and says so.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST = "results/re_debias/study/claims.json"
CROSS = "results/re_crossfit/debias/claims.json"


def entity_mde(c: dict, m: int, alpha: float = 0.05) -> float | None:
    """z(1 - alpha/(2m)) + z(0.8) times the entity-only SE (from the entity-only 95% interval)."""
    from wgbstats.verdicts import z_total

    lo, hi = c.get("ci_entity") or [None, None]
    if lo is None or hi is None or not all(map(math.isfinite, (lo, hi))):
        return None
    se = (hi - lo) / (2 * 1.959963984540054)
    return z_total(alpha / m) * se


def _row(c: dict | None, m: int) -> dict:
    if c is None:
        return {}
    tested = c.get("mde") is not None
    # beside a Holm verdict its interval at the level Holm tested it at (the 95% one could exclude 0
    # for a claim Holm leaves undecided)
    held = tested and c.get("ci_adjusted") is not None
    ci = c["ci_adjusted"] if held else c["ci"] if tested else c["ci_entity"]
    return {"verdict": c["verdict"], "value": c["value"], "ci": ci,
            "ci_level": c.get("ci_adjusted_level") if held else 0.95,
            "interval": "seeds x persons" if tested else "persons only (fewer than 3 seeds)",
            "mde": c["mde"] if tested else entity_mde(c, m), "mde_kind": "MDE" if tested else "entity-only MDE (lower bound)",
            "n_seeds": c["n_seeds"], "note": c.get("note", "")}


def protocols(test: dict, cross: dict | None, *, test_src: str = TEST, cross_src: str = CROSS) -> dict:
    t_claims = {c["claim"]: c for c in test.get("claims", [])}
    out = {"test_protocol": {"source": test_src, "persons": test.get("n_persons", 523), "plan": test.get("plan", {})},
           "rows": []}
    pops: dict[str, dict] = {}
    if cross:
        pops["test"] = {c["claim"]: c for c in cross.get("claims", [])}
        for name, p in (cross.get("populations") or {}).items():
            pops[name] = {c["claim"]: c for c in p.get("claims", [])}
        out["crossfit"] = {"source": cross_src, "folds": cross["meta"]["study"].get("folds"), "plan": cross.get("plan", {}),
                           "persons": {"test": cross.get("n_persons"),
                                       **{k: v.get("n_persons") for k, v in (cross.get("populations") or {}).items()}}}
    m = max(len(t_claims), 1)
    names = list(t_claims) + [n for n in pops.get("test", {}) if n not in t_claims]
    for name in names:
        t, c = t_claims.get(name), pops.get("test", {}).get(name)
        other = t is not None and c is not None and t.get("statistic") != c.get("statistic")
        # a claim over other members under the test protocol (a grid of fewer encoders) is not shown beside it
        row = {"claim": name, "test_protocol": {} if other else _row(t, m)}
        either = c or t or {}
        row["statistic"] = either.get("statistic")
        if (either.get("extra") or {}).get("narrows"):
            row["narrows"] = either["extra"]["narrows"]     # the paper's claim, over fewer members
        if other:
            row["test_protocol_other_members"] = t.get("statistic")
        for pop, claims in pops.items():
            row[f"crossfit_{pop}"] = _row(claims.get(name), max(len(claims), 1))
        out["rows"].append(row)
    return out


def _cell(r: dict, plan: dict | None = None) -> str:
    from wgbstudies.claims import verdict_text

    if not r:
        return "-"
    v = verdict_text(r["verdict"], plan)
    mde = "-" if r["mde"] is None else f"{r['mde']:.4f}"
    return f"{v}; {r['value']:+.4f} [{r['ci'][0]:+.4f}, {r['ci'][1]:+.4f}]; {mde}"


def _levels(p: dict) -> str:
    lv = [r[k]["ci_level"] for r in p["rows"] for k in r if isinstance(r[k], dict) and r[k].get("ci_level")]
    from wgbstudies.claims import level_text  # 0.99958 -> "99.958%", never a rounded "100.0%"

    return f"{level_text(min(lv))}-{level_text(max(lv))}" if lv else "95%"


def _seeds(seeds: list[int]) -> str:
    if len(seeds) == 1:
        return f"{seeds[0]} seed(s)"
    return f"{' or '.join(map(str, seeds))} seeds (by claim: the fewest of its combinations)"


def _runs(cf: dict) -> str:
    r = cf.get("runs") or {}
    return f" ({r['done']} of {r['planned']} fold runs)" if r.get("planned") else ""


def _status(p: dict) -> str:
    """The look of each protocol's study against its plan, when not a pre-registered final one."""
    from wgbstudies.plan import label_of

    said = []
    for key, name in (("test_protocol", "test protocol"), ("crossfit", "cross-fitted")):
        src = p.get(key)
        if src and "plan" in src:
            label = label_of({"plan": src["plan"]})
            if label:
                said.append(f"{name}: {label}")
    return (" Status: " + "; ".join(said) + ".") if said else ""


def markdown(p: dict) -> str:
    cf = p.get("crossfit")
    lines = []
    if cf:
        seeds = sorted({r[k]["n_seeds"] for r in p["rows"] for k in r if k.startswith("crossfit_") and r[k]})
        lines.append(f"Test protocol: the release's {p['test_protocol']['persons']} annotated test persons "
                     f"(`{p['test_protocol']['source']}`). Cross-fitted: {cf['folds']} folds, {_seeds(seeds)} so far{_runs(cf)}, "
                     f"the annotated test persons ({cf['persons'].get('test')}) and all persons "
                     f"({cf['persons'].get('all')}) side by side (`{cf['source']}`). Each cell: verdict; effect "
                     f"[interval at the level Holm tested the claim at, {_levels(p)}]; MDE at 80% power. With fewer than 3 seeds no claim is tested: the interval "
                     "is over persons only and the MDE is the entity-only one, a lower bound." + _status(p))
    lines += ["", "| claim | test protocol | crossfit, test persons | crossfit, all persons |", "|---|---|---|---|"]
    for r in p["rows"]:
        tp, cp = (p.get("test_protocol") or {}).get("plan"), (p.get("crossfit") or {}).get("plan")
        cells = [r["claim"], _cell(r["test_protocol"], tp), _cell(r.get("crossfit_test", {}), cp),
                 _cell(r.get("crossfit_all", {}), cp)]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    other = [r for r in p["rows"] if r.get("test_protocol_other_members")]
    if other:
        lines += ["", "Not beside the test protocol (its grid tested the claim over other members): "
                  + "; ".join(f"{r['claim']} (test protocol: {r['test_protocol_other_members']})" for r in other)
                  + "."]
    return "\n".join(lines).strip() + "\n"


PLAN = "results/re_crossfit/plan.json"


def plan_vs_measured(plan: dict, p: dict) -> dict:
    """Each claim's MDE as planned before any cross-fitted claim could be estimated (projected from the
    test persons to all persons, at the seeds run) beside the one measured on all persons, and whether
    the goal (MDE <= 0.01 for gap claims) is met."""
    planned = {c["claim"]: c for c in plan["studies"]["debias"]["claims"]}
    rows = []
    for r in p["rows"]:
        got = r.get("crossfit_all") or {}
        c = planned.get(r["claim"])
        if c is None and r.get("narrows") in planned and r.get("statistic") \
                and str(planned[r["narrows"]].get("statistic", "")).startswith(r["statistic"]):
            c = planned[r["narrows"]]   # planned under the paper's name, over the same members
        if not got or c is None or got.get("mde_kind") != "MDE":
            continue
        n = str(got["n_seeds"])
        mde_plan = (c.get("mde_crossfit") or {}).get(n)
        rows.append({"claim": r["claim"], "kind": c.get("kind"), "seeds": got["n_seeds"], "mde_planned": mde_plan,
                     "mde_measured": got["mde"], "verdict": got["verdict"],
                     "goal_met": None if c.get("kind") not in ("f1_gap", "eo_gap") else got["mde"] <= 0.01})
    return {"source": PLAN, "goal": "MDE <= 0.01 for every F1-gap claim", "rows": rows}


def plan_markdown(pv: dict) -> str:
    lines = ["", "### Planned and measured MDE (all persons)", "",
             f"The plan (`{pv['source']}`) projected each claim's MDE from the test persons' per-entity counts, "
             "before any cross-fitted claim could be estimated (its history: `results/re_crossfit/debias/plan.json`); "
             "measured: the same claim on all persons of the committed runs. "
             f"Goal: {pv['goal']}.", "",
             "| claim | seeds | MDE planned | MDE measured | goal met | verdict |", "|---|---|---|---|---|---|"]
    for r in pv["rows"]:
        plan = "-" if r["mde_planned"] is None else f"{r['mde_planned']:.4f}"
        goal = "-" if r["goal_met"] is None else ("yes" if r["goal_met"] else "no")
        lines.append(f"| {r['claim'].replace('|', chr(92) + '|')} | {r['seeds']} | {plan} | {r['mde_measured']:.4f} | "
                     f"{goal} | {r['verdict']} |")
    gap = [r for r in pv["rows"] if r["goal_met"] is not None]
    lines += ["", f"Gap claims meeting the goal: {sum(r['goal_met'] for r in gap)} of {len(gap)}."]
    return "\n".join(lines) + "\n"


def label_noise_gaps(runs_dir: Path, variants: list[str], seeds: list[int], folds: int) -> dict:
    """Spouse gap with / without the no-marriage-word bags, per variant, over the seeds whose every
    fold has predictions here, for both populations."""
    from relext.evaluation.score import read_prediction_set
    from wgbstudies import label_noise as ln

    ev = ln.spouse_evidence()
    out = {}
    for v in variants:
        runs, used = [], []
        for s in seeds:
            dirs = [runs_dir / f"{v}-attention-seed{s}-fold{k}" for k in range(folds)]
            if all((d / "predictions" / "male_test.jsonl").exists() and (d / "DONE").exists() for d in dirs):
                runs.append({k: read_prediction_set(d) for k, d in enumerate(dirs)})
                used.append(s)
        if not runs:
            continue
        out[v] = {"seeds": used, **{pop: ln.spouse_gap_sensitivity(runs, ev, population=pop, n_resamples=1000)
                                     for pop in ("test", "distant")}}
    return out


def label_noise_markdown(gaps: dict) -> str:
    """The spouse gap with and without the bags that have no marriage word, by population."""
    lines = ["| variant | persons | seeds | spouse F1 gap, all bags | without no-word bags | difference | "
             "bags left out (men / women, per seed) |", "|---|---|---|---|---|---|---|"]
    for v, r in gaps.items():
        for pop in ("test", "distant"):
            x = r[pop]
            f = lambda k: f"{x[k]['value']:+.4f} [{x[k]['ci'][0]:+.4f}, {x[k]['ci'][1]:+.4f}]"  # noqa: E731
            d = x["dropped_bags_per_run"][0]
            lines.append(f"| {v} | {pop} ({x['entities']['male']} men, {x['entities']['female']} women) | "
                         f"{', '.join(map(str, r['seeds']))} | {f('all')} | {f('without')} | {f('difference')} | "
                         f"{d['male']} / {d['female']} |")
    return "\n".join(lines) + "\n\nIntervals: " + (next(iter(gaps.values()))["test"]["interval"] if gaps else "-") + "\n"


def main(argv=None) -> int:
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "re_crossfit" / "debias")
    ap.add_argument("--no-label-noise", action="store_true")
    ap.add_argument("--grid-out", type=Path, default=ROOT / "results" / "re_crossfit" / "grid")
    ap.add_argument("--grid-all-out", type=Path, default=ROOT / "results" / "re_crossfit" / "grid_all")
    ap.add_argument("--seeds-out", type=Path, default=ROOT / "results" / "re_crossfit" / "debias_seeds",
                    help="where the none + cda seeds study's claims_summary.md goes")
    a = ap.parse_args(argv)
    test = json.loads((ROOT / TEST).read_text())
    cpath = ROOT / CROSS
    cross = json.loads(cpath.read_text()) if cpath.exists() else None
    p = protocols(test, cross)
    if (ROOT / PLAN).exists() and cross:
        p["plan_vs_measured"] = plan_vs_measured(json.loads((ROOT / PLAN).read_text()), p)
    atomic_write_json(a.out / "protocols.json", p)
    atomic_write_text(a.out / "protocols.md", page(p))
    if cross and not a.no_label_noise:
        st = cross["meta"]["study"]
        gaps = label_noise_gaps(ROOT / st["runs_dir"], st["variants"], st["seeds"], st["folds"])
        if gaps:
            atomic_write_json(a.out / "label_noise_gap.json", gaps)
            atomic_write_text(a.out / "label_noise_gap.md", label_noise_markdown(gaps))
        else:  # a clone has the runs' counts, not their predictions: keep the committed results
            print(f"label-noise sensitivity not rewritten: no fold run of {st['runs_dir']} has its predictions "
                  "here (they are not committed; the runs that wrote them have)", file=sys.stderr)
    if (ROOT / SEEDS_STUDY).exists():
        main_res = json.loads((ROOT / MAIN_STUDY).read_text()) if (ROOT / MAIN_STUDY).exists() else None
        atomic_write_text(a.seeds_out / "claims_summary.md",
                          seeds_study(json.loads((ROOT / SEEDS_STUDY).read_text()), main_res))
    grid_md = grid_protocols(a.grid_out, seeds_plan_src=GRID_SEEDS_PLAN)
    grid_all_md = grid_protocols(a.grid_all_out, GRID_ALL, GRID_PLAN)
    print(a.out / "protocols.md", grid_md, grid_all_md)
    return 0


SEEDS_STUDY = "results/re_crossfit/debias_seeds/results.json"
MAIN_STUDY = "results/re_crossfit/debias/results.json"


def seeds_study(res: dict, main: dict | None, src: str = SEEDS_STUDY, main_src: str = MAIN_STUDY) -> str:
    """The none + cda seeds study as it stands, beside the 13-claim study's verdict of each claim
    (all persons). Its family is its own (Holm over its claims), chosen after the 5-seed study, and
    its plan (``plan.json``) fixes 36 seeds: until they are in, every claim is "interim: not decided"."""
    from wgbstudies.plan import label_of

    dr = res["design_report"]
    seeds = dr["design"]["seeds"]
    pops = {"test": dr["claims"], **{k: v["claims"] for k, v in dr.get("populations", {}).items()}}
    ref_rep = (main or {}).get("design_report", {})
    ref = {c["claim"]: c for c in ref_rep.get("populations", {}).get("all", {}).get("claims", [])}
    fin = res["meta"].get("runs_done") or []
    plan = dr.get("plan", {})
    label = label_of(dr)
    lines = [f"`none` and `cda` only, cross-fitted ({res['meta']['study'].get('folds')} folds), seeds with all folds "
             f"finished: none {len(seeds.get('none', []))}, cda {len(seeds.get('cda', []))} of the planned "
             f"{len(res['meta']['study']['seeds'])} ({len(fin)} fold runs; `{src}`, {dr['design']['n_resamples']} "
             f"replicates). Holm over this study's {len(dr['claims'])} claims: a family chosen after the 5-seed "
             "study's verdicts. " + (f"Status: {label}. " if label else "")
             + f"The 13-claim study's verdict (all persons, `{main_src}`) beside: a claim over fewer members is "
             "named by them (\"... under none and CDA\"), so it has no cell there. Each cell: verdict; effect "
             "[interval at Holm's level]; MDE.", "",
             "| claim | test persons | all persons | 13-claim study, all persons |", "|---|---|---|---|"]

    def cell(x: dict | None, st: dict | None) -> str:   # the interval at Holm's level, as the other tables
        return "-" if not x else _cell({**x, "ci": x.get("ci_adjusted") or x["ci"]}, st)

    for c, a in zip(pops["test"], pops.get("all", [{}] * len(pops["test"]))):
        lines.append(f"| {c['claim'].replace('|', chr(92) + '|')} | {cell(c, plan)} | {cell(a, plan)} | "
                     f"{cell(ref.get(c['claim']), ref_rep.get('plan', {}))} |")
    return "\n".join(lines) + "\n"


GRID_TEST = "results/re_grid_cnn_pcnn/results.json"
GRID_CROSS = "results/re_crossfit/grid/results.json"
GRID_ALL = "results/re_crossfit/grid_all/results.json"
GRID_PLAN = "results/re_crossfit/grid_rnn_plan.json"
GRID_SEEDS_PLAN = "results/re_crossfit/grid_ten_seeds_plan.json"


def grid_protocols(out: Path, cross_src: str = GRID_CROSS, plan_src: str | None = None,
                   seeds_plan_src: str | None = None) -> Path | None:
    """A cross-fitted grid's claims under both protocols (the test-protocol CNN/PCNN grid and the
    cross-fitted one, each ``results.json``'s design report) -> ``out/protocols.{json,md}``; with
    ``plan_src`` (the RNN/BiRNN power plan) also the planned MDE beside the measured one, with
    ``seeds_plan_src`` (the ten-seed plan) its planned seeds and MDE beside the measured ones."""
    from wgbcore.atomicio import atomic_write_json, atomic_write_text

    if not (ROOT / GRID_TEST).exists() or not (ROOT / cross_src).exists():
        return None
    test = json.loads((ROOT / GRID_TEST).read_text())["design_report"]
    res = json.loads((ROOT / cross_src).read_text())
    cross = {**res["design_report"], "meta": {"study": {"folds": res["meta"]["folds"]}}}
    p = protocols(test, cross, test_src=GRID_TEST, cross_src=cross_src)
    meta = res["meta"]
    p["crossfit"]["runs"] = {"done": len(meta.get("runs_done") or []), "planned": meta.get("n_runs")}
    if plan_src and (ROOT / plan_src).exists():
        p["plan_vs_measured"] = grid_plan_vs_measured(json.loads((ROOT / plan_src).read_text()), p, plan_src)
    if seeds_plan_src and (ROOT / seeds_plan_src).exists():
        p["seeds_plan_vs_measured"] = seeds_plan_vs_measured(json.loads((ROOT / seeds_plan_src).read_text()), p,
                                                             seeds_plan_src)
    atomic_write_json(out / "protocols.json", p)
    atomic_write_text(out / "protocols.md", page(p))
    return out / "protocols.md"


def page(p: dict) -> str:
    """``protocols.md`` from its ``protocols.json``: the claims under both protocols, then the plan
    sections the JSON holds (a debiasing plan, the RNN/BiRNN grid plan, a seeds plan)."""
    md = markdown(p)
    pv = p.get("plan_vs_measured")
    if pv:
        md += grid_plan_markdown(pv) if "not_in_results" in pv else plan_markdown(pv)
    if p.get("seeds_plan_vs_measured"):
        md += seeds_plan_markdown(p["seeds_plan_vs_measured"])
    return md


def seeds_plan_vs_measured(plan: dict, p: dict, src: str = GRID_SEEDS_PLAN) -> dict:
    """A seeds plan's claims (``population``, ``seeds_planned``, ``mde_planned``, per population)
    beside the cross-fitted measurement of the same claim: seeds run, MDE, verdict; a claim the
    results do not have, or with fewer seeds than planned, says so."""
    measured = {r["claim"]: r for r in p["rows"]}
    rows, missing = [], []
    for c in plan["claims"]:
        r = measured.get(c["claim"])
        if r is None:
            missing.append(f"{c['claim']} ({c['population']})")
            continue
        rows.append({"claim": c["claim"], "population": c["population"], "seeds_planned": c["seeds_planned"],
                     "mde_planned": c["mde_planned"], **_measured(r, c["population"])})
    return {"source": src, "rows": rows, "not_in_results": missing}


def _measured(row: dict, pop: str) -> dict:
    """A protocols row's cross-fitted cell of population ``pop`` as a plan table reads it: its seeds,
    and its MDE and verdict once the claim is tested (an entity-only lower bound is not)."""
    got = row.get(f"crossfit_{pop}") or {}
    tested = got.get("mde_kind") == "MDE"
    return {"seeds": got.get("n_seeds"), "mde_measured": got.get("mde") if tested else None,
            "verdict": got.get("verdict") if tested else "not yet tested"}


def seeds_plan_markdown(pv: dict) -> str:
    f = lambda x: "-" if x is None else f"{x:.4f}"  # noqa: E731
    by = {}
    for r in pv["rows"]:
        by.setdefault(r["claim"], {})[r["population"]] = r
    lines = ["", "### The ten-seed plan: planned and measured", "",
             f"The plan (`{pv['source']}`) fixed each claim's seeds and projected its MDE at them (80% power at "
             "Holm's first step) before the new seeds' fold runs; measured: the same claim of these runs.", "",
             "Seeds: planned (the seeds the claim's members share) / measured (the seeds of the member that "
             "decides it, its weakest one on all persons).", "",
             "| claim | seeds planned / measured | test persons: MDE planned / measured | all persons: MDE planned / "
             "measured | verdict (test persons; all persons) |", "|---|---|---|---|---|"]
    for claim, pops in by.items():
        t, a = pops.get("test", {}), pops.get("all", {})
        ref = a or t
        lines.append(f"| {claim.replace('|', chr(92) + '|')} | {ref.get('seeds_planned', '-')} / "
                     f"{ref.get('seeds') if ref.get('seeds') is not None else '-'} | {f(t.get('mde_planned'))} / "
                     f"{f(t.get('mde_measured'))} | {f(a.get('mde_planned'))} / {f(a.get('mde_measured'))} | "
                     f"{t.get('verdict', '-')}; {a.get('verdict', '-')} |")
    done = [r for r in pv["rows"] if r["mde_measured"] is not None]
    short = [r for r in pv["rows"] if (r["seeds"] or 0) < r["seeds_planned"]]
    lines += ["", f"Measured at or below the planned MDE: {sum(r['mde_measured'] <= r['mde_planned'] for r in done)}"
              f" of {len(done)} claim-population pairs tested."
              + (f" Short of the planned seeds: {len(short)}." if short else " Every claim at its planned seeds.")]
    if pv["not_in_results"]:
        lines.append(f"Planned, not in the results: {'; '.join(pv['not_in_results'])}.")
    return "\n".join(lines) + "\n"


def grid_plan_vs_measured(plan: dict, p: dict, src: str = GRID_PLAN) -> dict:
    """The RNN/BiRNN plan's MDEs (stand-ins for RNN/BiRNN, written before their runs) beside the
    measured ones, both populations; a claim with fewer than 3 seeds so far is "not yet tested"."""
    planned = {c["claim"]: c for c in plan["claims"]}
    rows = []
    for r in p["rows"]:
        c = planned.get(r["claim"])
        if c is None:
            continue
        row = {"claim": r["claim"], "involves_stand_ins": c["involves_stand_ins"]}
        for pop in ("test", "all"):
            row[pop] = {"mde_planned": c.get(f"mde_{pop}"), **_measured(r, pop)}
        gap = "micro F1" not in r["claim"]
        m = row["all"]["mde_measured"]
        row["goal_met"] = None if not gap or m is None else m <= 0.01
        rows.append(row)
    missing = [n for n in planned if n not in {r["claim"] for r in rows}]
    return {"source": src, "goal": "MDE <= 0.01 for every F1-gap claim", "rows": rows, "not_in_results": missing}


def grid_plan_markdown(pv: dict) -> str:
    f = lambda x: "-" if x is None else f"{x:.4f}"  # noqa: E731
    lines = ["", "### Planned and measured MDE", "",
             f"The plan (`{pv['source']}`) projected each claim's MDE before any RNN/BiRNN fold run, RNN and BiRNN "
             "stood in by CNN and PCNN; measured: the same claim of the committed runs. "
             f"Goal: {pv['goal']} (all persons).", "",
             "| claim | stand-ins in the plan | seeds | test persons: planned / measured | all persons: planned / measured | "
             "goal met | verdict (all persons) |", "|---|---|---|---|---|---|---|"]
    for r in pv["rows"]:
        t, a = r["test"], r["all"]
        goal = "-" if r["goal_met"] is None else ("yes" if r["goal_met"] else "no")
        lines.append(f"| {r['claim'].replace('|', chr(92) + '|')} | {'yes' if r['involves_stand_ins'] else 'no'} | "
                     f"{a['seeds'] if a['seeds'] is not None else '-'} | {f(t['mde_planned'])} / {f(t['mde_measured'])} | "
                     f"{f(a['mde_planned'])} / {f(a['mde_measured'])} | {goal} | {a['verdict']} |")
    done = [r for r in pv["rows"] if r["all"]["mde_measured"] is not None and r["all"]["mde_planned"] is not None]
    stand = [r for r in done if r["involves_stand_ins"]]
    below = sum(r["all"]["mde_measured"] <= r["all"]["mde_planned"] for r in stand)
    own = [r for r in done if not r["involves_stand_ins"]]
    worst = max((abs(r["all"]["mde_measured"] / r["all"]["mde_planned"] - 1) for r in own), default=None)
    gap = [r for r in pv["rows"] if r["goal_met"] is not None]
    lines += ["", f"Claims the plan stood in for (all persons): measured at or below the plan for {below} of "
              f"{len(stand)}. "
              + (f"The other {len(own)} rest on the very runs the plan used: planned and measured differ by the "
                 f"bootstrap's own noise only (at most {100 * worst:.0f}%). " if own else "")
              + f"Gap claims meeting the goal: {sum(r['goal_met'] for r in gap)} of {len(gap)}."]
    if pv["not_in_results"]:
        lines.append(f"Planned, no runs yet: {'; '.join(pv['not_in_results'])}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
