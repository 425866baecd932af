"""Blocks of the docs pages (docs/guide/*.md) written from committed results files, so that no
measured number is typed into a page's prose.

Imported by ``scripts/readme_tables.py`` (its ``BLOCKS``); every function returns the body of one
generated block, reads nothing but the committed file(s) it names and names them in its text.
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RELEASE_REPORT = "wikigenderbias/data/wikigenderbias/report.json"


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def release_spans(src: str = RELEASE_REPORT) -> str:
    """Sizes of the embedded release and the share of its mentions located, per relation."""
    r = _load(src)
    counts, spans = r["counts"], r["spans"]
    persons = sum(s["entities"] for s in counts.values())
    tot = spans["total"]
    out = [f"The release holds {tot['rows']:,} sentences about {persons:,} people; located mentions per relation "
           f"(`{src}`, written by `scripts/convert_release.py` from the data files):", "",
           "| relation | rows | head located | tail located |", "|---|---|---|---|"]
    for rel in ("spouse", "hypernym", "birthDate", "birthPlace", "NA"):
        g = spans["per_relation_gender"][rel].values()
        rows = sum(x["rows"] for x in g)
        head, tail = sum(x["head_located"] for x in g), sum(x["tail_located"] for x in g)
        out.append(f"| {rel} | {rows:,} | {head / rows:.1%} | {tail / rows:.1%} |")
    n = tot["rows"]
    out.append(f"| all | {n:,} | {tot['head_located'] / n:.1%} | {tot['tail_located'] / n:.1%} "
               f"(both: {tot['both_located'] / n:.1%}) |")
    return "\n".join(out)


def export_unlocated(src: str = "results/data_export/opennre_manifest_skip.json") -> str:
    """Rows `--unlocated skip` drops from the test pair of the release."""
    sp = _load(src)["splits"]
    return (f"On the release `--unlocated skip` drops {sp['male_test']['skipped_rate']:.1%} of `male_test` against "
            f"{sp['female_test']['skipped_rate']:.1%} of `female_test` (`{src}`; per split and gender in "
            "`results/data_export/README.md`).")


def embedding_bias(src: str = "results/re_debias/embedding_bias/embedding_bias.json") -> str:
    """Direct bias and WEAT of the Word2Vec vectors, before and after hard debiasing, and with CDA."""
    v = _load(src)["variants"]
    none, cda = v["none"], v["cda"]
    wb, wa = none["weat_before"]["science_arts"], none["weat_after"]["science_arts"]
    p = lambda x: "p < 0.001" if x < 0.001 else f"p {x:.2f}"  # noqa: E731
    return (f"Word2Vec on the training sentences: direct bias {none['direct_bias_before']['value']:.3f} -> "
            f"{none['direct_bias_after']['value']:.3f} after hard debiasing (by construction; "
            f"{none['direct_bias_after_own_direction']['value']:.3f} along the direction found again in the debiased "
            f"vectors); the WEAT science/arts effect size falls from {wb['effect_size']:.2f} ({p(wb['p_value'])}) to "
            f"{wa['effect_size']:.2f} ({p(wa['p_value'])}), and training on CDA data alone brings it to "
            f"{cda['weat_before']['science_arts']['effect_size']:.2f} ({p(cda['weat_before']['science_arts']['p_value'])}) "
            f"(`{src}`, tables in `embedding_bias.md`).")


def re_grid_transformer(src: str = "results/re_grid_transformer/results.json",
                        cpu: str = "benchmarks/results/re_speed_transformer.json",
                        grid: str = "results/re_grid/results.json") -> str:
    """The transformer encoder's grid (GPU) and its CPU speed."""
    r = _load(src)
    combos = r["variants"]["argmax"]
    seeds = sorted({c["n_seeds"] for c in combos})
    dev = ", ".join(r["timing"].get("devices") or []) or "an unrecorded device"
    micro = "; ".join(f"{c['selector']} {c['micro_f1']['male_test']['mean']:.3f} / {c['micro_f1']['female_test']['mean']:.3f}"
                      for c in combos)
    best_other = max(max(c["micro_f1"]["male_test"]["mean"], c["micro_f1"]["female_test"]["mean"])
                     for c in _load(grid)["variants"]["argmax"])
    f1_flagged = sum(g["flagged"] for c in combos for k, g in c["gaps"]["f1"].items() if k != "micro")
    sp = [(c["selector"], c["gaps"]["recall"]["spouse"]) for c in combos]
    sp_text = ", ".join(f"{s} {g['mean']:+.3f} [{g['ci_low']:+.3f}, {g['ci_high']:+.3f}]"
                        f"{'' if g['flagged'] else ' (interval includes 0)'}" for s, g in sp)
    c = _load(cpu)
    return (f"`{src}` ({'/'.join(map(str, seeds))} seeds per selector, argmax rule; trained on {dev}): micro F1 "
            f"male / female {micro}, against at most {best_other:.3f} for the word-vector encoders "
            f"(`{grid}`). F1-gap seed intervals excluding 0: {f1_flagged} of "
            f"{sum(len(x['gaps']['f1']) - 1 for x in combos)}; equality-of-opportunity gap (recall male − female) "
            f"of spouse, mean [seed interval]: {sp_text}. On CPU ({c['threads']} threads, torch {c['torch']}): "
            f"{c['seconds_per_batch']:.0f} s per batch of {c['hyperparameters']['batch_bags']} bags, about "
            f"{c['projected_epoch_seconds'] / 60:.0f} minutes per epoch projected from {c['timed_batches']} timed "
            f"batches, 1-minute load {c['load_before'][0]:.1f} -> {c['load_after'][0]:.1f} (`{cpu}`).")


def kge_measure_speed(fisher: str = "benchmarks/results/kge_bias_speed.json",
                      du: str = "benchmarks/results/kge_du_speed.json",
                      val: str = "benchmarks/results/kge_du_validation.json") -> str:
    """Fisher et al. and Du et al. over all of FB13, and the influence function against retraining."""
    f, d, v = _load(fisher), _load(du), _load(val)
    rows = f["rows"]
    by = lambda m: [x["seconds_best"] for x in rows if x["method"] == m]  # noqa: E731
    auto, closed = by("autograd"), by("closed")
    r0 = rows[0]
    lk = v["leave_k_out"]
    return (f"Fisher over all {r0['persons']:,} FB13 persons x {r0['professions']} professions takes "
            f"{min(auto):.1f}-{max(auto):.1f} s wall depending on the model (autograd"
            + (f"; {min(closed):.1f}-{max(closed):.1f} s in closed form where the model has one" if closed else "")
            + f"; {f['torch_threads']} threads, `{fisher}`); Du's B_in over all {d['pairs']:,} (person, occupation) "
            f"pairs {d['ours_best_seconds']:.1f} s (`{du}`); the influence approximation correlates with real "
            "leave-k-out retraining at r = " + " and ".join(f"{o['pearson_r']:.3f} ({occ})" for occ, o in lk.items())
            + f" (`{val}`). Filtered evaluation of the full FB13 test set (both sides) against PyKEEN's evaluator "
            "is in the speed table above.")


def kge_convergence(src: str = "benchmarks/results/kge_convergence.json") -> str:
    """Hits@10 of the five models trained until validation MRR stopped improving."""
    r = _load(src)
    ms = r["models"]
    both = [m["test"]["hits_at_10"] for m in ms]
    tail = [m["test"]["sides"]["tail"]["hits_at_10"] for m in ms]
    head = [m["test"]["sides"]["head"]["hits_at_10"] for m in ms]
    each = "; ".join(f"{m['model']} {m['test']['hits_at_10']:.3f} after {m['epochs_run']} epochs (best "
                     f"{m['best_epoch']}), {m['train_seconds']:.0f} s" for m in ms)
    return (f"Trained until validation MRR stopped improving (`{src}`, table in `kge_convergence.md`; {r['note']}). "
            f"Filtered Hits@10 on the {ms[0]['test']['num_triples']:,} FB13 test triples is "
            f"{min(both):.2f}-{max(both):.2f} for all {len(ms)} models ({each}): {min(tail):.2f}-{max(tail):.2f} on "
            f"the tail side and {min(head):.4f}-{max(head):.4f} on the head side.")


def pbg_fb13_disk(src: str = "benchmarks/results/kge_pbg_scaling.json") -> str:
    """Bucket bytes of our export against what PBG's importer would allocate, for FB13 at each partition count."""
    runs = {x["partitions"]: x["rank0"]["layout"] for x in _load(src)["runs"]
            if x["label"].startswith("fb13") and x["machines"] == 1}
    def size(b: float) -> str:
        return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.{1 if b < 100 * 2**20 else 0}f} MiB"
    parts = "; ".join(f"{n} partition(s) {size(lay['bytes'])} / {size(lay['pbg_hdf5_bytes'])}"
                      for n, lay in sorted(runs.items()))
    return (f"FB13 ({next(iter(runs.values()))['num_edges']:,} edges), our bucket files / what PBG's own importer would allocate (computed from its 50 MiB blocks by `kge.pbg_export.pbg_hdf5_bytes`): "
            f"{parts} (`{src}`, the `layout` of each FB13 run in the figures below).")


def study_sizes(debias: str = "results/re_debias/study/study.json",
                crossfit: str = "results/re_crossfit/debias/study.json") -> str:
    """How many training runs the committed studies plan."""
    d = _load(debias)
    n = sum(len(d["variant_seeds"].get(v, d["seeds"])) for v in d["variants"])
    c = _load(crossfit)
    folds, seeds, arms = c["folds"], len(c["seeds"]), len(c["variants"])
    return (f"A study is many independent training runs: the debiasing study is {n} (`{debias}`), the cross-fitted "
            f"protocol's main arms alone {folds * seeds * arms} ({folds} folds x {seeds} seeds x {arms} arms, "
            f"`{crossfit}`).")


def anonymize_bags(src: str = "results/re_crossfit/anonymize_bags.json",
                   before: str = "results/re_crossfit/anonymize_bags_v1.json") -> str:
    """Bags anonymization used to split (version 1) and what version 2 does instead."""
    c, v1 = _load(src)["counts"], _load(before)["counts"]

    def share(counts: dict, proto: str, pop: str, rel: str, what: str = "split") -> str:
        x = counts[proto][pop][rel]
        return f"{x[what] / x['pairs']:.1%} ({x[what]:,} of {x['pairs']:,})"

    splits = sum(x["split"] for by in c.values() for rels in by.values() for x in rels.values())
    merged = sum(x.get("merged", 0) for by in c.values() for rels in by.values() for x in rels.values())
    return ("Version 1 of the anonymizer decided per sentence whether a tail is a person, so where the NER found a "
            "spouse's name in some of a pair's sentences only, the pair's sentences formed two bags and the "
            "anonymize arm was scored on more bags than the other arms: spouse pairs split "
            f"{share(v1, 'crossfit_held_out', 'test', 'spouse')} of the test persons' and "
            f"{share(v1, 'crossfit_held_out', 'distant', 'spouse')} of the distant persons' when held out by "
            f"cross-fitting (`{before}`). Version 2 decides it per article and tail (a person in every sentence "
            "when it is a known name or the NER finds it in at least half of the sentences that locate it, else in "
            f"none; two tails that read alike get labels of their own): it splits {splits:,} pairs and merges "
            f"{merged:,} in any relation, population or protocol (`{src}`). Its price: a "
            "place or occupation the NER takes for a person that often loses its name in every sentence of its "
            "pair; held-out test persons' tails replaced everywhere: spouse "
            f"{share(c, 'crossfit_held_out', 'test', 'spouse', 'replaced')}, birthPlace "
            f"{share(c, 'crossfit_held_out', 'test', 'birthPlace', 'replaced')}, hypernym "
            f"{share(c, 'crossfit_held_out', 'test', 'hypernym', 'replaced')}. A run records the version "
            "(`transform_versions` in its `config.json`), so a run of version 1 is refused, never reused.")


def design_calibration(src: str = "results/calibration/calibration.json") -> str:
    d = _load(src)
    rows, cov, meta = d["type_i"], d["coverage"], d["meta"]
    pop = "test persons"
    levels = ["alpha", "alpha/28", "alpha/(28x21)"]
    men, women = meta["populations"][pop]["men"], meta["populations"][pop]["women"]
    out = [f"Rejections of a true null per nominal level (1.00 = nominal), {meta['sims'][pop]:,} simulated studies per "
           f"row at the annotated test persons' counts ({men} men, {women} women); alpha = 0.05, "
           f"alpha/28 is Holm's first step for the eight-combination grid's claims, alpha/(28x21) an intersection-union "
           f"claim of its parts (there a count of rejections: a few are Monte Carlo noise); 'plug-in': the "
           f"Welch-Satterthwaite t test; coverage of the 95% interval "
           f"(`{src}`, `results/calibration/calibration.md` for all persons and every level, and the power curves).", "",
           "| case | seeds | " + " | ".join(levels[:-1]) + f" | {levels[-1]}: rejections (nominal "
           f"{meta['levels'][levels[-1]] * meta['sims'][pop]:.1f}) | plug-in at alpha/28 | 95% coverage |",
           "|---|---|" + "---|" * (len(levels) + 2)]
    for name in meta["scenarios"]:
        for s in sorted({r["seeds"] for r in rows}):
            rs = {r["level"]: r for r in rows if r["population"] == pop and r["scenario"] == name and r["seeds"] == s}
            c = next(x for x in cov if x["population"] == pop and x["scenario"] == name and x["seeds"] == s)
            cells = [f"{rs[lv]['ratio']:.2f}" for lv in levels[:-1]] + [str(rs[levels[-1]]["rejections"])]
            out.append(f"| {name} | {s} | " + " | ".join(cells)
                       + f" | {rs['alpha/28']['plugin_ratio']:.2f} | {c['coverage_95']:.3f} |")
    return "\n".join(out)


def kge_stability(src: str = "results/kge_stability/results.json") -> str:
    """A KGE bias measure's top items over embedding seeds and models on FB13: the claims across
    models with their verdicts, per model the mean |score| and the seeds' agreement."""
    r = _load(src)
    m = r["meta"]
    each = ", ".join(f"{x} ({m['epochs'][x]} epochs, dim {m['dim'][x]})" for x in m["models"])
    out = [f"`{m['measure']}` ({m['spec']}) on FB13, seeds {', '.join(map(str, m['seeds']))} of {each}"
           + (", each model at its settings and best validated epoch in the convergence benchmark"
              if m.get("settings") == "convergence" else "")
           + f"; claim: the share of one run's top {m['top_k']} also in the paired run's top {m['top_k']} exceeds "
           f"{m['margin']}, runs paired by seed, 95% intervals over seeds x items, verdicts at Holm's levels (`{src}`, "
           "written by `scripts/kge_stability.py`; the rendered report in `results/kge_stability/report/`):", "",
           "| claim | agreement | 95% CI | chance | verdict |", "|---|---|---|---|---|"]
    for c in r["claims"]:
        out.append(f"| {c['claim']} | {c['agreement']:.3f} | [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}] | "
                   f"{c['chance']:.3f} | {c['verdict']} |")
    out += ["", "| model | items | lean decided (Holm) | mean \\|score\\| [95% CI] | "
            f"seeds' top-{m['top_k']} agreement towards male / female |", "|---|---|---|---|---|"]
    for model, d in r["per_model"].items():
        e, sa = d["mean_abs_score"], d["seed_agreement"]
        agree = " / ".join(f"{sa[k]['agreement']:.2f}" if sa.get(k) else "-" for k in ("male", "female"))
        out.append(f"| {model} | {d['items']:,} | {d['decided_items']:,} | {e['value']:.3g} "
                   f"[{e['ci'][0]:.3g}, {e['ci'][1]:.3g}] | {agree} |")
    return "\n".join(out)


BLOCKS = {"anonymize-bags": anonymize_bags, "release-spans": release_spans, "export-unlocated": export_unlocated, "embedding-bias": embedding_bias,
          "re-grid-transformer": re_grid_transformer, "kge-measure-speed": kge_measure_speed,
          "kge-convergence": kge_convergence, "pbg-fb13-disk": pbg_fb13_disk, "study-sizes": study_sizes,
          "design-calibration": design_calibration, "kge-stability": kge_stability}
