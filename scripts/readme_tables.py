"""Write the generated blocks of the README and the docs from the committed results files (never retype a number).

A block sits between ``<!-- BEGIN generated:NAME -->`` and ``<!-- END generated:NAME -->`` in
README.md, a page under docs/ or a results README; this script rewrites its body from the results
file it names:

    python scripts/readme_tables.py           # rewrite every block
    python scripts/readme_tables.py --check   # exit 1 when a block differs from its source (a test runs this)
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def data_stats() -> str:
    src = "results/data_stats/stats.json"
    fa = _load(src)["further_analysis"]["per_relation"]
    sp, hy = fa["spouse"], fa["hypernym"]
    return (f"`wgb data stats` reproduces the paper's further analysis on the release: female articles devote "
            f"{sp['female']['share_of_sentences']['mean']:.1%} of their sentences to the spouse "
            f"({sp['female']['sentences_per_article']['mean']:.2f} spouse sentences per article) against "
            f"{sp['male']['share_of_sentences']['mean']:.1%} ({sp['male']['sentences_per_article']['mean']:.2f}) "
            f"for male articles, and male articles mention the hypernym more "
            f"({hy['male']['share_of_sentences']['mean']:.1%} vs {hy['female']['share_of_sentences']['mean']:.1%}); "
            f"Mann-Whitney p {sp['difference']['mann_whitney_p']:.1e} and {hy['difference']['mann_whitney_p']:.1e} "
            f"(`{src}`).")


def groups_release(src: str = "results/groups/release/cells.json") -> str:
    """The dataset card's cell counts of the release's person-level groups (scripts/groups_release.py)."""
    d = _load(src)

    def table(name: str, label: str) -> list[str]:
        cells = d["cells"][name]
        rows = [g for g in cells if g == "total" or cells[g]["total"]]
        cols = list(cells["total"])
        out = [f"| {label} | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
        return out + ["| " + " | ".join([g, *(f"{cells[g][c]:,}" for c in cols)]) + " |" for g in rows]

    cov, unk = d["coverage"], d["unknown"]
    spot = d["spot_check"]["tally"]
    return "\n".join([
        f"{d['persons']:,} persons, {cov['distinct_places']:,} distinct birthplaces; a country for "
        f"{cov['persons_with_country']:,} persons ({cov['share_with_country']:.1%}), a region for "
        f"{cov['persons_with_region']:,} ({cov['share_with_region']:.1%}); unknown (counted, never dropped): era "
        f"{unk['era']:,}, country {unk['country']:,}, region {unk['region']:,} persons. A spot check of "
        f"{d['spot_check']['n']} random birthplaces: {spot['correct']} correct, {spot['wrong']} wrong, "
        f"{spot['unmapped']} unmapped. Persons whose gender is neither female nor male: "
        f"{sum(v['total'] for g, v in d['cells']['gender_x_era'].items() if g not in ('female', 'male', 'total')):,}.",
        "",
        *table("gender_x_era", "gender \\ birth era"), "", *table("gender_x_region", "gender \\ region"), "",
        *table("gender_x_north_south", "gender \\ Global North/South"), "", f"(`{src}`)"])


def _claims_table(claims: list[dict], halves: list[dict] | None, plan: dict | None = None) -> list[str]:
    """A study's claims; ``plan``: the look's status (``plan`` of its claims table): interim claims
    say "interim (k of n seeds): not decided", an exploratory study's verdicts say so."""
    from wgbstudies.claims import level_text, verdict_text
    from wgbstudies.plan import label_of

    label = label_of({"plan": plan}) if plan is not None else None
    lines = ([f"Status: {label}.", ""] if label else []) + [
        "| claim | verdict | effect [interval at Holm's level, seeds x entities] | seeds | to decide | halves |",
        "|---|---|---|---|---|---|"]
    for i, c in enumerate(claims):
        v = c["verdict"]
        todo = "-" if v != "undecided" else (f"~{c['seeds_to_decide']} seeds" if c.get("seeds_to_decide")
                                             else (f"more {c['needs']}" if c.get("needs") else (c.get("note") or "-")))
        h = halves[i] if halves else {}
        ci, level = (c["ci_adjusted"], c.get("ci_adjusted_level")) if c.get("ci_adjusted") else (c["ci"], None)
        cells = [c["claim"], verdict_text(v, plan),
                 f"{c['value']:+.4f} [{ci[0]:+.4f}, {ci[1]:+.4f}] ({level_text(level) if level else '95%, unadjusted'})",
                 str(c["n_seeds"]), todo,
                 (f"{h.get('first_half') or '-'} / {h.get('second_half') or '-'}" if h.get("checked", True)
                  else "interim: not checked" if h.get("interim") else "not checked (< 3 seeds per half)")]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return lines


def older_transform_runs(runs_dir: str) -> dict[str, int]:
    """{transform versions recorded: runs} of the committed runs in ``runs_dir`` whose recorded
    transform versions differ from this wgb's (``relext.training.config``)."""
    from relext.training.config import ExtractorConfig

    out: dict[str, int] = {}
    for cfg_path in sorted((ROOT / runs_dir).glob("*/config.json")):
        cfg = ExtractorConfig.from_json(cfg_path, record=True)
        try:
            cfg.current()
        except ValueError:
            names = "+".join([*cfg.dataset_transform, *cfg.vectors_transform])
            out[names] = out.get(names, 0) + 1
    return out


def re_debias_study() -> str:
    src = "results/re_debias/study/claims.json"
    path = ROOT / src
    if not path.exists():
        return "The study's first results are not committed yet."
    rep = _load(src)
    res = _load("results/re_debias/study/results.json")
    meta = res["meta"]
    seeds = rep["design"]["seeds"]
    counts = ", ".join(f"{v} {len(s)}" for v, s in seeds.items())
    d = rep["design"]
    out = [f"PCNN+attention, {meta['runs_evaluated']} of {meta['n_runs']} planned runs finished "
           f"(`{src}`; seeds per variant: {counts}). Verdicts from a two-level bootstrap over seeds and test "
           f"entities ({d['n_resamples']} replicates, paired across variants), Holm's correction across the "
           f"{len(rep['claims'])} claims at alpha {d['alpha']}; 'halves' re-decides each claim on two disjoint "
           "halves of the seeds and the persons."]
    stale = older_transform_runs("results/re_debias/study/runs")
    if stale:
        out[-1] += (f" Not like for like: {sum(stale.values())} runs ({', '.join(f'{k}: {v}' for k, v in stale.items())}) "
                    "ran an older version of a transform than this wgb's (their `config.json`; the anonymizer's "
                    "version 1 split a gold pair into two bags where the NER found its tail in some sentences only, "
                    "see above), so their claims await a rerun.")
    out += [""]
    out += _claims_table(rep["claims"], rep.get("half_split"), rep.get("plan", {}))
    cl = rep["claims"]
    decided = [c for c in cl if c["verdict"] in ("supported", "contradicted")]
    stable = [h for h in rep.get("half_split", []) if h.get("stable")]
    needs = {k: [c["claim"] for c in cl if c["verdict"] == "undecided" and c.get("needs") == k]
             for k in ("seeds", "seeds or articles", "articles", "seeds and articles")}
    out += ["", f"{len(decided)} of {len(cl)} claims decided ({len(stable)} of them the same on two disjoint halves "
                "of the seeds and the persons). What would decide the undecided ones (80% power at Holm's first "
                "level; as seeds grow the variance falls to the persons' own sampling noise): "
                + "; ".join(f"more {k}: {len(v)}" + (f" ({', '.join(v)})" if k == "seeds and articles" else "")
                            for k, v in needs.items() if v) + "."]
    flagged = [g for g in rep["gaps"] if g["flagged"]]
    out += ["", f"Gaps whose combined interval excludes 0 after Benjamini-Hochberg correction over all "
                f"{len(rep['gaps'])} variant x metric x relation gaps: "
            + ("; ".join(f"{g['variant']} {g['metric']} {g['relation']} {g['value']:+.3f} "
                         f"[{g['ci'][0]:+.3f}, {g['ci'][1]:+.3f}]" for g in flagged) or "none") + "."]
    emb = res.get("embedding_bias_trained") or {}
    if emb:
        parts = [f"{v}: {e['initial_direct_bias_own_direction']:.3f} -> {e['trained_direct_bias_own_direction']:.3f}"
                 f" ({e['n_runs']} runs)" for v, e in emb.items()]
        out += ["", "Direct bias of the word embeddings (own gender direction), at initialisation -> after "
                    "training: " + "; ".join(parts) + "."]
    return "\n".join(out)


def re_grid(src: str = "results/re_grid/results.json") -> str:
    if not (ROOT / src).exists():
        return f"`{src}` is not committed yet."
    res = _load(src)
    combos = res["variants"]["argmax"]
    micro = "; ".join(f"{c['encoder']}+{c['selector']} {c['micro_f1']['male_test']['mean']:.3f} / "
                      f"{c['micro_f1']['female_test']['mean']:.3f}" for c in combos)
    seeds = sorted({c["n_seeds"] for c in combos})
    rep = res.get("design_report") or {}
    meta = res.get("meta", {})
    done = (f"{meta.get('runs_evaluated')} of {meta.get('n_runs')} runs finished; "
            if meta.get("runs_evaluated") != meta.get("n_runs") else "")
    out = [f"`{src}` ({done}{len(combos)} encoder/selector combinations x {'/'.join(map(str, seeds))} seeds; "
           f"argmax rule). Micro F1 male / female: {micro}.", ""]
    out += [f"- {line}" for line in res.get("findings", [])]
    if rep.get("claims"):
        out += ["", *_claims_table(rep["claims"], rep.get("half_split"), rep.get("plan", {}))]
    else:
        out += ["", "These are point estimates: the committed grid runs predate per-entity counts, so they carry "
                    "no seed x entity verdicts (rerun with `wgb re grid` to get them)."]
    return "\n".join(out)


def anonymize_label_blind() -> str:
    src = "results/re_debias/anonymize_label_blind.json"
    r = _load(src)
    new, old = r["label_blind"]["rows_changed_by_scrambling"], r["before_19"]["rows_changed_by_scrambling"]
    sp = r["label_blind"]["tail_replaced_by_gold_relation"]
    return (f"Scrambling the test splits' relation labels changes {sum(new.values())} of {r['n_test_rows']:,} "
            f"anonymized test rows, against {sum(old.values()):,} with the anonymizer before #19; the tail "
            f"becomes a person label in {sp['spouse']['share']:.1%} of spouse rows, "
            f"{sp['hypernym']['share']:.1%} of hypernym rows and {sp['birthPlace']['share']:.1%} of birthPlace "
            f"rows, decided from the text alone (`{src}`).")


def wgb_run_full(src: str = "results/wgb_run/full") -> str:
    """The committed multi-seed ``wgb run --profile full``: its verdicts per question (or, withdrawn,
    why and how to make it: scripts/withdraw_wgb_run.py)."""
    if not (ROOT / src / "run.json").exists():
        return withdrawn_notice(src, ROOT) or f"`{src}/` holds no multi-seed run yet."
    rep, run = _load(f"{src}/report.json"), _load(f"{src}/run.json")
    a = rep["analysis"]
    seeds = a["seeds"]
    out = [f"`{run['command']}`: {len(seeds)} seeds ({', '.join(map(str, seeds))}), "
           f"{run['wall_seconds'] / 60:.0f} min wall on {run['cpu_count']} cores "
           f"(peak memory {run['max_rss_mb'] / 1024:.1f} GB; `{src}/run.json`"
           + (f"; {run['note']}" if run.get("note") else "") + "). "
           f"{a['n_claims']} claims, Holm's correction at alpha {a['alpha']}; test articles: "
           f"{a['n_entities']['male']:,} about men, {a['n_entities']['female']:,} about women "
           f"(`{src}/report.json`, `report.html`).", ""]
    for q in a["answer"]:
        n = q["summary"]
        out += [f"**{q['question']}** {n['supported']} supported, {n['contradicted']} contradicted, "
                f"{n['undecided']} undecided.", ""]
        out += ["| claim | verdict | effect [95% interval] | interval over | seeds |", "|---|---|---|---|---|"]
        for v in q["rows"]:
            verdict = v["verdict"] if v["verdict"] == "undecided" else f"**{v['verdict']}**"
            cells = [v["claim"], verdict, f"{v['value']:+.4f} [{v['ci'][0]:+.4f}, {v['ci'][1]:+.4f}]",
                     v.get("over", "-"), str(v["n_seeds"])]
            out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
        out.append("")
    return "\n".join(out).rstrip()


def wgb_run_crossfit(src: str = "results/wgb_run/crossfit") -> str:
    """The cross-fitted ``wgb run`` (every person of the benchmark): its claims on all persons and on
    the test persons side by side, and the graph sizes at both scales (or, withdrawn, why and how to
    make it: scripts/withdraw_wgb_run.py)."""
    if not (ROOT / src / "run.json").exists():
        return withdrawn_notice(src, ROOT) or f"`{src}/` holds no cross-fitted run yet."
    rep, run = _load(f"{src}/report.json"), _load(f"{src}/run.json")
    a = rep["analysis"]
    sc = a.get("scales")
    if not sc:
        return f"`{src}/report.json` has no side-by-side scales."
    seeds = a["seeds"]
    sz = sc["sizes"]
    def cell(c):
        if not c:
            return "-"
        ci = c.get("ci_adjusted") or c["ci"]
        return (f"{c['verdict']}; {c['value']:+.4f} [{ci[0]:+.4f}, {ci[1]:+.4f}]; "
                + ("-" if c.get("mde") is None else f"{c['mde']:.4f}"))
    held = any((r["all"] or {}).get("ci_adjusted") for r in sc["rows"])
    out = [f"`{run['command']}`: {len(seeds)} seed(s) ({', '.join(map(str, seeds))}), "
           f"{run['wall_seconds'] / 60:.0f} min wall on {run['cpu_count']} cores, peak memory "
           f"{run['max_rss_mb'] / 1024:.1f} GB (`{src}/run.json`" + (f"; {run['note']}" if run.get("note") else "")
           + f"). All persons: {sz['all']['persons']['male']:,} men, {sz['all']['persons']['female']:,} women; "
           f"test persons: {sz['test']['persons']['male']} men, {sz['test']['persons']['female']} women. "
           "Each cell: verdict; effect [" + ("interval at the level Holm tested the claim at" if held else "95% interval")
           + "]; MDE at 80% power (\"-\": fewer than 3 seeds, no test).", "",
           "| claim | all persons | test persons only |", "|---|---|---|"]
    for r in sc["rows"]:
        out.append("| " + " | ".join(str(x).replace("|", "\\|") for x in (r["claim"], cell(r["all"]), cell(r["test"]))) + " |")
    out += ["", f"| graph | triples: all persons | test persons | hypernym items held by >= {sz['all']['min_count']} "
                "persons: all | test persons |", "|---|---|---|---|---|"]
    for g, n in sz["all"]["triples"].items():
        out.append(f"| {g} | {n:,.0f} | {sz['test']['triples'][g]:,.0f} | {sz['all']['items'][g]:,.0f} | "
                   f"{sz['test']['items'][g]:,.0f} |")
    out += ["", f"(`{src}/report.json`, `report.html`)"]
    return "\n".join(out)


def wgb_run_quick(src: str = "results/wgb_run/quick") -> str:
    """Wall time and peak memory of the README's first command's `wgb run` (quick profile)."""
    if not (ROOT / src / "run.json").exists():
        return f"`{src}/` holds no timed run yet."
    run = _load(f"{src}/run.json")
    return (f"Measured: `{run['command']}` took {run['wall_seconds']:.0f} s on {run['cpu_count']} cores, peak memory "
            f"{run['max_rss_mb']:,.0f} MB (`{src}/run.json`" + (f"; {run['note']}" if run.get("note") else "") + ").")


def score_opennre(src: str = "results/score_opennre") -> str:
    """OpenNRE's predictions scored by ``wgb re score`` (scripts/score_opennre.py)."""
    if not (ROOT / src / "score.json").exists():
        return f"`{src}/score.json` is not committed yet."
    sc, run = _load(f"{src}/score.json"), _load(f"{src}/run.json")
    ep = run["epochs"]
    n = sc["n_entities"]
    out = [f"{run['system']}, {len(ep)} epoch(s) ({sum(e['seconds'] for e in ep):.0f} s on {run['threads']} "
           f"thread(s), load average {run['loadavg_before'][0]:.0f}-{run['loadavg_after'][0]:.0f}; "
           f"{run['word_vectors']}); {sc['n_bags']:,} test bags from {n['male']} male and {n['female']} female "
           f"articles; {sc['confidence']:.0%} intervals: {sc['method']} ({sc['n_resamples']} resamples). "
           f"**Bold**: that gap's own interval excludes 0, not corrected for the {len(sc['gaps'])} gaps: one "
           f"run of one system is a worked example, not a verdict (several runs get corrected flags) "
           f"(`{src}/score.json`).", "",
           "| relation | metric | male | female | gap [95% interval] |", "|---|---|---|---|---|"]
    for g in sc["gaps"]:
        gap = f"{g['gap']:+.4f}"
        out.append(f"| {g['relation']} | {'F1' if g['metric'] == 'f1' else 'EO (recall)'} | {g['male']:.4f} | "
                   f"{g['female']:.4f} | {'**' + gap + '**' if g['flagged'] else gap} "
                   f"[{g['ci_low']:+.4f}, {g['ci_high']:+.4f}] |")
    return "\n".join(out)


def kge_du_to_target(src: str = "benchmarks/results/kge_du_validation.json") -> str:
    """Du et al.'s removal, one-shot against stepwise-to-target, on held-out seeds."""
    d = _load(src)
    t = d.get("to_target")
    if not t:
        return f"`{src}` has no stepwise results yet."
    out = [f"B_gr of each end graph retrained with held-out seeds {t['eval_seeds']} (mean [95% t-interval]); "
           f"each step of the stepwise removal retrains seeds {t['replicate_seeds']}; |B_gr| change paired by "
           f"seed against the start graph (`{src}`, table in `kge_du_validation.md`).", "",
           "| occupation | end graph | triples removed | B_gr, held-out seeds | \\|B_gr\\| change vs start |",
           "|---|---|---|---|---|"]
    for occ, o in t["occupations"].items():
        for name, e in o["ends"].items():
            ch = e.get("abs_change_vs_start")
            out.append(f"| {occ} | {name} | {e['removed']} | {e['mean']:+.3f} [{e['ci'][0]:+.3f}, {e['ci'][1]:+.3f}] | "
                       + (f"{ch['mean']:+.3f} [{ch['ci'][0]:+.3f}, {ch['ci'][1]:+.3f}]" if ch else "-") + " |")
        out.append("")
    ratios = ", ".join(f"{occ} {o['leave_k_out_ratio']:.2f}" for occ, o in t["occupations"].items())
    out.append(f"Measured / predicted change in leave-k-out retraining: {ratios}: the influence function "
               "overestimates the change, which is why the one-shot removal overshoots.")
    return "\n".join(out).rstrip()


def crossfit_blocks() -> dict:
    """The power-plan and label-noise blocks of docs/guide/debiasing.md, as scripts/study/power_plan.py writes them."""
    def block(name: str):
        def body() -> str:
            sys.path.insert(0, str(ROOT))
            from study.power_plan import docs_blocks  # noqa: E402 (scripts/study/power_plan.py)

            return docs_blocks(ROOT / "results" / "re_crossfit")[name].rstrip("\n")
        return body
    def folds() -> str:
        src = "results/re_crossfit/folds.md"
        lines = (ROOT / src).read_text(encoding="utf-8").splitlines()
        return "\n".join([*lines[2:], "", f"(`{src}`, written by `scripts/study/crossfit_folds.py`)"]).strip()
    def md(src: str, what: str):
        def body() -> str:
            path = ROOT / src
            if not path.exists():
                return f"{what} not committed yet."
            return path.read_text(encoding="utf-8").strip() + f"\n\n(`{src}`, written by `scripts/study/crossfit_report.py`)"
        return body
    return {"power-plan": block("power-plan"), "label-noise": block("label-noise"), "crossfit-folds": folds,
            "re-crossfit-study": md("results/re_crossfit/debias/protocols.md", "The cross-fitted study"),
            "re-crossfit-grid": md("results/re_crossfit/grid/protocols.md", "The cross-fitted grid"),
            "re-crossfit-grid-all": md("results/re_crossfit/grid_all/protocols.md", "The eight-combination cross-fitted grid"),
            "grid-rnn-plan": lambda: (ROOT / "results/re_crossfit/grid_rnn_plan.md").read_text(encoding="utf-8").strip()
            + "\n\n(`results/re_crossfit/grid_rnn_plan.md`)",
            "cda-seeds-study": md("results/re_crossfit/debias_seeds/claims_summary.md", "The none + cda seeds study"),
            "cda-seeds-plan": lambda: (ROOT / "results/re_crossfit/cda_seeds_plan.md").read_text(encoding="utf-8").strip()
            + "\n\n(`results/re_crossfit/cda_seeds_plan.md`)",
            "re-crossfit-label-noise": md("results/re_crossfit/debias/label_noise_gap.md", "The label-noise gaps")}


sys.path.insert(0, str(Path(__file__).resolve().parent))
from readme_blocks_bench import BLOCKS as BENCH_BLOCKS  # noqa: E402
from readme_blocks_headline import BLOCKS as HEADLINE_BLOCKS  # noqa: E402
from readme_blocks_docs import BLOCKS as DOCS_BLOCKS  # noqa: E402
from readme_blocks_groups import BLOCKS as GROUPS_BLOCKS  # noqa: E402
from withdraw_wgb_run import markdown as withdrawn_markdown, notice as withdrawn_notice  # noqa: E402

BLOCKS = {**BENCH_BLOCKS, **HEADLINE_BLOCKS, **DOCS_BLOCKS, **GROUPS_BLOCKS, **crossfit_blocks(), "data-stats": data_stats, "kge-du-to-target": kge_du_to_target, "score-opennre": score_opennre, "wgb-run-full": wgb_run_full, "wgb-run-crossfit": wgb_run_crossfit, "wgb-run-quick": wgb_run_quick, "wgb-run-withdrawn": withdrawn_markdown, "anonymize-label-blind": anonymize_label_blind, "groups-release": groups_release,
          "re-grid-cnn-pcnn": lambda: re_grid("results/re_grid_cnn_pcnn/results.json"), "re-debias-study": re_debias_study, "re-grid": re_grid}
FILES = ["README.md", "wikigenderbias/data/wikigenderbias/README.md", "results/re_debias/README.md", "results/re_grid/README.md",
         "results/re_grid_cnn_pcnn/README.md", "results/wgb_run/WITHDRAWN.md"]


def files() -> list[str]:
    """FILES and every page of the docs site."""
    return FILES + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
PATTERN = re.compile(r"(<!-- BEGIN generated:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- END generated:(?P=name) -->)",
                     re.S)


class UnknownBlock(Exception):
    """A block name no generator in BLOCKS writes."""


def render(text: str) -> str:
    def sub(m: re.Match) -> str:
        name = m.group("name")
        if name not in BLOCKS:
            raise UnknownBlock(f"unknown generated block {name!r}; known: {sorted(BLOCKS)}")
        return m.group(1) + BLOCKS[name]() + "\n" + m.group(4)

    return PATTERN.sub(sub, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report stale blocks, change nothing")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from wgbcore.atomicio import atomic_write_text

    stale, unknown = [], []
    for rel in files():
        path = ROOT / rel
        if not path.exists():
            continue
        old = path.read_text(encoding="utf-8")
        try:
            new = render(old)
        except Exception as e:  # an unknown block or a failing generator: the other files are still written
            unknown.append(f"{rel}: {type(e).__name__}: {e}")
            continue
        if new != old:
            stale.append(rel)
            if not args.check:
                atomic_write_text(path, new)
    for line in unknown:
        print(line, file=sys.stderr)
    if args.check and stale:
        print(f"stale generated blocks in {stale}: run python scripts/readme_tables.py", file=sys.stderr)
    return 1 if unknown or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
