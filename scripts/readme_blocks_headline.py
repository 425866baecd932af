"""The README's and the landing page's headline blocks: set-up times and headline results.

Imported by ``scripts/readme_tables.py`` (its ``BLOCKS``); every function returns the body of one
generated block and reads nothing but the committed results files it names.
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUP = "results/setup/fresh_copy.json"


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def setup_times(src: str = SETUP) -> str:
    """Wall time of the first command's install and of CI's tests on a fresh copy (scripts/record_setup.py)."""
    if not (ROOT / src).exists():
        return f"`{src}` is not recorded yet (`python scripts/record_setup.py`)."
    r = _load(src)
    i, c = r["install"], r["ci"]
    t = c["pytest"]
    skipped = f", {t['skipped']} skipped" if t.get("skipped") else ""
    failed = f", {t['failed'] + t.get('error', 0)} failed" if t.get("failed") or t.get("error") else ""
    return (f"Measured on a fresh copy ({r['cpu_count']} cores, load average {r['loadavg_before'][0]:.1f} at the "
            f"start and {r['loadavg_after'][0]:.1f} at the end; {r['note']}): the install took "
            f"{i['wall_seconds']:.0f} s; `.ci/run` (the extras PyKEEN, WEFE, the docs tools and Chromium, "
            f"`mkdocs build --strict`, then every test) {c['wall_seconds'] / 60:.1f} min, of which the tests "
            f"{t['seconds'] / 60:.1f} min: {t['passed']} passed{failed}{skipped} (`{src}`).")


def _run_summary(g: str) -> str:
    """The main job's headline: the cross-fitted run (its claims tested against their nulls) when
    committed; withdrawn (results/wgb_run/withdrawn.json), that it was and where to read why; the
    5-seed test-protocol run's claims predate those corrections and are not quoted."""
    src = "results/wgb_run/crossfit"
    if not (ROOT / src / "report.json").exists():
        from withdraw_wgb_run import PAGE, RECORD

        gone = _load(RECORD)["withdrawn"] if (ROOT / RECORD).exists() else []
        if not gone:
            return ""
        from wgbstats.design import DESIGN_VERSION

        quick = "results/wgb_run/quick"
        return (f"- **The main job** ([guide]({g}main-job.md)): its multi-seed reports ("
                + "; ".join(f"`{e['folder']}/`: {'cross-fitted' if e['protocol'] == 'crossfit' else 'test protocol'}, "
                            f"{len(e['seeds'])} seeds" for e in gone)
                + f") were withdrawn: made under design version "
                + ", ".join(sorted({str(e['design_version']) for e in gone}))
                + f", they are not regenerated under today's rules (version {DESIGN_VERSION}) yet, which needs their "
                f"extractors retrained; `{PAGE}` says why and how to make them. Committed: the quick one-seed run "
                f"(`{quick}/`), which decides no claim.")
    rep = _load(f"{src}/report.json")
    a = rep["analysis"]
    sz = a["scales"]["sizes"]
    n = len(a["seeds"])
    counts = {k: sum(1 for v in a["verdicts"] if v["verdict"] == k)
              for k in ("supported", "contradicted", "undecided", "not applicable")}
    told = (f"{counts['supported']} supported, {counts['contradicted']} contradicted, {counts['undecided']} undecided, "
            f"{counts['not applicable']} not applicable" if n >= 3 else "no claim tested yet (3 seeds decide them)")
    return (f"- **The main job** ([guide]({g}main-job.md)): cross-fitted over every person "
            f"({sz['all']['persons']['male']:,} men, {sz['all']['persons']['female']:,} women), the gold graph holds "
            f"{sz['all']['triples']['gold']:,.0f} triples against {sz['test']['triples']['gold']:,.0f} for the test "
            f"persons alone, and {sz['all']['items']['gold']:,.0f} hypernym items held by at least "
            f"{sz['all']['min_count']} persons against {sz['test']['items']['gold']:,.0f}; {n} seed(s) committed: "
            f"{told} (`{src}/`).")


def _crossfit_summary(g: str) -> str:
    """The debiasing study's entity-only MDEs on the test persons and on all persons (cross-fitted)."""
    src = "results/re_crossfit/debias/protocols.json"
    p = _load(src)
    rows = [r for r in p["rows"] if r.get("crossfit_test") and r.get("crossfit_all")
            and r["crossfit_test"].get("mde") and r["crossfit_all"].get("mde")]
    if not rows:
        return ""
    ratio = sorted(r["crossfit_test"]["mde"] / r["crossfit_all"]["mde"] for r in rows)
    seeds = sorted({r["crossfit_all"]["n_seeds"] for r in rows})
    decided = [r for r in rows if r["crossfit_all"]["verdict"] in ("supported", "contradicted")]
    return (f"- **Whole-benchmark verdicts** ([guide]({g}crossfit.md)): cross-fitting judges all "
            f"{p['crossfit']['persons']['all']:,} persons instead of {p['crossfit']['persons']['test']}; on the "
            f"debiasing study's claims, MDE on the test persons alone / MDE on all persons: median "
            f"{ratio[len(ratio) // 2]:.1f} (range {ratio[0]:.1f}-{ratio[-1]:.1f}; {len(rows)} claims, "
            f"{', '.join(map(str, seeds))} seed(s) so far); "
            f"{len(decided)} decided on all persons (`{src}`).")


def headlines(prefix: str = "docs/") -> str:
    """One line per result, with the page that has it; ``prefix`` = where the docs pages are."""
    g = prefix + "guide/"
    d = _load("benchmarks/results/distant_vs_release.json")
    paper = next(c for c in d["configs"].values() if not c["config"]["require_head"])
    strict = next(c for c in d["configs"].values() if c["config"]["require_head"] and not c["config"]["pronouns"])
    re_speed = _load("benchmarks/results/re_speed_gather_2t_idle.json")     # PCNN's default path (gather)
    re_speed_1t = _load("benchmarks/results/re_speed_gather_1t.json")
    grid = _load("results/re_grid/results.json")["variants"]["argmax"]
    f1 = [c["micro_f1"][s]["mean"] for c in grid for s in ("male_test", "female_test")]
    study_rep = _load("results/re_debias/study/claims.json")
    study = study_rep["claims"]
    from wgbstudies.plan import label_of

    status = label_of(study_rep)
    decided = [c for c in study if c["verdict"] in ("supported", "contradicted")]
    limited = [c for c in study if c["verdict"] == "undecided" and "no seed count" in (c.get("note") or "")]
    kspeed = _load("benchmarks/results/kge_speed_5ep_2t.json")
    thesis = _load("benchmarks/results/kge_fb13_thesis_range.json")
    hits = {m["model"]: m["test"]["sides"]["tail"]["hits_at_10"] for m in thesis["models"]}
    opennre = next(x for x in _load("results/score_opennre/score.json")["gaps"] if x["relation"] == "micro")
    dec = "; ".join(f"{c['claim']}: {c['verdict']} ({c['value']:+.4f} [{c['ci'][0]:+.4f}, {c['ci'][1]:+.4f}])"
                    for c in decided)
    lines = [
        f"- **Building from dumps** ([guide]({g}building.md)): the paper's selection rule, now the default, "
        f"recovers {paper['relations']['spouse']['recall_of_release']:.1%} of the release's spouse sentences and "
        f"{paper['relations']['birthPlace']['recall_of_release']:.1%} of its birthPlace sentences "
        f"(`--require-head`: {strict['relations']['spouse']['recall_of_release']:.1%} and "
        f"{strict['relations']['birthPlace']['recall_of_release']:.1%}).",
        f"- **Extractors** ([guide]({g}extractors.md)): PCNN+attention (its default gather convolution) trains "
        f"{re_speed['speedup_vs_opennre']['pcnn+attention']:.1f}x faster than OpenNRE 0.1.1 on "
        f"{re_speed['threads']} CPU threads ({re_speed_1t['speedup_vs_opennre']['pcnn+attention']:.1f}x on "
        f"{re_speed_1t['threads']}); the encoder x selector grid's micro F1 lies between "
        f"{min(f1):.3f} and {max(f1):.3f} (per combination and gender).",
        f"- **Debiasing study** ([guide]({g}debiasing.md)): {len(decided)} of {len(study)} of the paper's claims "
        f"decided at seeds x test articles ({dec}); {len(limited)} of the {len(study) - len(decided)} undecided ones "
        "would need more test articles, not more seeds" + (f"; {status}" if status else "") + ".",
        f"- **Scoring any extractor** ([guide]({g}scoring.md)): OpenNRE's PCNN+attention, scored by `wgb re score`, "
        f"has a micro F1 gap of {opennre['gap']:+.3f} [{opennre['ci_low']:+.3f}, {opennre['ci_high']:+.3f}] "
        "(male - female).",
        f"- **Knowledge-graph embeddings** ([guide]({g}kge.md)): TransE trains "
        f"{kspeed['ratios']['train_triples_per_s_wall']:.1f}x faster than PyKEEN {kspeed['pykeen_version']} on "
        f"{kspeed['threads']} threads; on FB13 the `range` profile reaches tail Hits@10 {hits['transe']:.3f} (TransE) "
        f"and {hits['transh']:.3f} (TransH) against the thesis' {thesis['thesis']['transe']['hits_at_10']:.2f} and "
        f"{thesis['thesis']['transh']['hits_at_10']:.2f}.",
        _crossfit_summary(g),
        _run_summary(g),
    ]
    return "\n".join(x for x in lines if x)


BLOCKS = {"setup-times": setup_times, "headlines-readme": lambda: headlines("docs/"),
          "headlines-docs": lambda: headlines("")}
