"""README blocks written from the committed ``benchmarks/results`` files (speed, quality, scale).

Imported by ``scripts/readme_tables.py`` (its ``BLOCKS``); every function returns the body of one
generated block and reads nothing but the results file(s) it names.
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RES = "benchmarks/results"


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def _exists(rel: str) -> bool:
    return (ROOT / rel).exists()


def _load_range(*loads) -> str:
    firsts = [x[0] for x in loads if x]
    return f"{min(firsts):.1f}-{max(firsts):.1f}" if firsts else "-"


def kge_speed() -> str:
    """TransE on FB13, ours vs PyKEEN in the same run, 2 and 1 threads."""
    lines = ["| threads | ours, 5 epochs (s) | PyKEEN, 5 epochs (s) | ratio, wall (median [range]) | ratio, CPU | "
             "test Hits@10 ours / PyKEEN | filtered eval of the full test set, ours / PyKEEN | load (1 min) |",
             "|---|---|---|---|---|---|---|---|"]
    srcs = []
    for tag in ("5ep_2t", "5ep_1t"):
        src = f"{RES}/kge_speed_{tag}.json"
        if not _exists(src):
            continue
        srcs.append(src)
        r = _load(src)
        reps, rat = r.get("repeats") or [], r["ratios"]
        o, p = r["ours"], r["pykeen"]
        ow = sorted(q["ours_wall_s"] for q in reps) or [o["train_wall_s"]]
        pw = sorted(q["pykeen_wall_s"] for q in reps) or [p["train_wall_s"]]
        med = lambda xs: xs[len(xs) // 2]  # noqa: E731 (odd counts: the median)
        lo, hi = rat.get("train_wall_range", [rat["train_triples_per_s_wall"]] * 2)
        loads = [q["load"][0] for q in reps] + [q["load"][1] for q in reps]
        lines.append(
            f"| {r['threads']} | {med(ow):.2f} | {med(pw):.2f} | **{rat['train_triples_per_s_wall']:.2f}x** "
            f"[{lo:.2f}, {hi:.2f}], {len(reps) or 1} pairs | {rat['train_triples_per_s_cpu']:.2f}x | "
            f"{o['eval_full_test']['hits_at_10']:.4f} / {p['eval_full_test_by_our_evaluator']['hits_at_10']:.4f} | "
            f"{o['eval_full_test']['wall_s']:.1f} s / {p['eval_subset']['extrapolated_full_test_wall_s']:,.0f} s "
            f"(extrapolated from {p['eval_subset']['num_triples']} triples) | {_load_range(*loads)} |")
    if not srcs:
        return "The speed benchmark's results are not committed yet."
    s = _load(srcs[0])["settings"]
    return "\n".join([
        f"TransE L{s['p_norm']}, dim {s['dim']}, batch {s['batch_size']}, {s['negatives']} negative, margin loss, "
        f"Adam lr {s['lr']}, {s['epochs']} epochs, same seed, both trainers in one process, timed alternately "
        "(ours with its model set-up, PyKEEN's training loop without; median of the pairs); Hits@10 filtered, both sides, our evaluator for both models "
        f"(it agrees with PyKEEN's on a subset). Files: " + ", ".join(f"`{x}`" for x in srcs) + ".", "", *lines])


def kge_thesis() -> str:
    """TransE/TransH on FB13 against Bourli 2021's Hits@10, one row per profile and model."""
    srcs = [f"{RES}/{n}.json" for n in ("kge_fb13_thesis", "kge_fb13_thesis_range") if _exists(f"{RES}/{n}.json")]
    if not srcs:
        return "The FB13 thesis comparison is not committed yet."
    lines = [f"Full FB13 test set, filtered; the profiles' fields are in `kge.train_profiles` and the results files "
             f"({', '.join(f'`{x}`' for x in srcs)}):", "",
             "| profile | model | budget (min) | epochs | train s | **tail Hits@10** | tail Hits@10, type-constrained | "
             "thesis (OpenKE) | tail MRR | load (1 min) before -> after |", "|---|---|---|---|---|---|---|---|---|---|"]
    b = None
    for src in srcs:
        r = _load(src)
        b = r["frequency_baseline"]
        for m in r["models"]:
            t = m["test"] or {}
            tail = (t.get("sides") or {}).get("tail", {})
            ref = r["thesis"].get(m["model"], {})
            typed = (m.get("tail_type_constrained") or {}).get("hits_at_10", float("nan"))
            lines.append(f"| `{r['profile']}` | {m['model']} | {r['budget_minutes']:g} | {m['epochs_run']} | "
                         f"{m['train_seconds']:.0f} | **{tail['hits_at_10']:.3f}** | {typed:.3f} | "
                         f"{ref.get('hits_at_10', float('nan')):.2f} ({ref.get('epochs', '?')} epochs) | "
                         f"{tail['mrr']:.3f} | {m['load_before'][0]:.1f} -> {m['load_after'][0]:.1f} |")
    lines.append(f"| - | frequency baseline (no embeddings) | - | - | - | {b['hits_at_10']:.3f} | {b['hits_at_10']:.3f} | - | "
                 f"{b['mrr']:.3f} | - |")
    return "\n".join(lines)


def re_speed_gru() -> str:
    """GRU / BiGRU + attention epochs beside the PCNN epoch of the same run."""
    src = f"{RES}/re_speed_gru.json"
    r = _load(src)
    target = {"rnn": 60, "birnn": 100}
    lines = [f"One epoch over the release's train split ({r['train_bags']:,} bags, {r['train_sentences']:,} "
             f"sentences, {r['mean_tokens']:.0f} tokens on average), {r['threads']} threads, torch {r['torch']}, "
             f"{r['started']} (`{src}`):", "",
             "| model | epoch s (wall) | epoch CPU s | x PCNN's epoch, same run | target | load (1 min) before -> after |",
             "|---|---|---|---|---|---|"]
    for run in r["runs"]:
        t = target.get(run["encoder"])
        lines.append(f"| {run['model']} | {run['epoch_seconds'][0]:.1f} | {run['epoch_cpu_seconds'][0]:.1f} | "
                     f"{run['vs_pcnn']:.2f} | {f'<= {t} s: ' + ('met' if run['epoch_seconds'][0] <= t else 'NOT met') if t else '-'} | "
                     f"{run['load_before'][0]:.1f} -> {run['load_after'][0]:.1f} |")
    before = []
    for enc, f in (("GRU", "re_speed_rnn"), ("BiGRU", "re_speed_birnn")):
        if _exists(f"{RES}/{f}.json"):
            x = _load(f"{RES}/{f}.json")["runs"][0]
            before.append(f"{enc} {x['epoch_seconds'][0]:.0f} s ({x['epoch_cpu_seconds'][0]:.0f} CPU s, `{f}.json`)")
    if before:
        lines += ["", "Before the fused recurrence, with torch's `nn.GRU` over packed sequences, an epoch took "
                  + " and ".join(before) + "."]
    acc = f"{RES}/re_speed_rnn_accuracy.json"
    if _exists(acc):
        runs = _load(acc)["runs"]
        cells = []
        for enc, name in (("rnn", "GRU"), ("birnn", "BiGRU")):
            by = {r["impl"]: r["epochs"][-1] for r in runs if r["encoder"] == enc and r["seed"] == 0 and not r.get("rerun")}
            if {"module", "fused"} <= set(by):
                m, f = by["module"], by["fused"]
                cells.append(f"{name} validation micro F1 {m['validation']['micro_f1']:.4f} (`nn.GRU`) vs "
                             f"{f['validation']['micro_f1']:.4f} (fused), test {m['test']['micro_f1']:.4f} vs "
                             f"{f['test']['micro_f1']:.4f}")
        if cells:
            lines += ["", f"Same accuracy (`{acc}`, seed 0, {_load(acc)['epochs']} epochs, both paths): "
                      + "; ".join(cells) + "."]
    return "\n".join(lines)


def re_speed_rnn_gather() -> str:
    """The RNN/BiRNN recurrence, fused vs gather, paired in one run; the matrix-product floor."""
    src = f"{RES}/re_speed_rnn_gather.json"
    r = _load(src)
    loads = [x[p]["load_before"] for e in r["encoders"].values() for x in e.get("rounds", []) for p in ("fused", "gather")]
    lines = [f"Measured side by side (`{src}`; {r['threads']} torch thread(s), GRU + attention, each epoch timed over "
             f"{r['batches']} of its {r['epoch_batches']} batches and extrapolated; 1-minute load "
             f"{_load_range(*loads)} on {r['cpu_count']} shared cores, so CPU seconds are the measure):", "",
             "| encoder | fused epoch CPU s | gather epoch CPU s | fused / gather (median [range]) | "
             "matrix products, share of the fused / gather profile | floor: recurrent products alone, CPU s | "
             "most any exact float32 path can gain over fused |", "|---|---|---|---|---|---|---|"]
    for enc, e in r["encoders"].items():
        if "ratio_cpu_median" not in e:
            continue
        prof = e.get("profile", {})
        share = " / ".join(f"{prof[p]['gemm_share']:.0%}" for p in ("fused", "gather") if p in prof) or "-"
        lines.append(f"| {enc} | {e['cpu_s_median']['fused']:.1f} | {e['cpu_s_median']['gather']:.1f} | "
                     f"{e['ratio_cpu_median']:.2f}x [{e['ratio_cpu_range'][0]:.2f}-{e['ratio_cpu_range'][1]:.2f}] | "
                     f"{share} | {e['floor_cpu_s']:.1f} ({e['recurrent_gflop_per_epoch']:.0f} GFLOP at "
                     f"{e['gemm_gflops_per_s']:.0f} GFLOP/s) | {e['ceiling_vs_fused']:.2f}x |")
    return "\n".join(lines)


def data_build_speed() -> str:
    """Whole builds (read, match, write) of a generated 10,000-person dump."""
    src = f"{RES}/data_build_write.json"
    r = _load(src)
    lines = [f"`wgb data build` on a generated dump of {r['generated']['persons']:,} person articles "
             f"({r['generated']['compressed_bytes'] / 1e6:.0f} MB .bz2), {r['machine']['cpus']} cores (`{src}`; "
             f"load average {r['loadavg_before'][0]:.1f} at the start, {r['loadavg_after'][0]:.1f} at the end):", "",
             "| input | executor | workers | person articles | pass 2 articles/s | end-to-end articles/s | "
             "end-to-end / pass 2 (target >= 0.8) | write s | peak RSS main / largest worker MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for x in r["runs"]:
        if x.get("dump") != "full":
            continue
        worker = f"{x['peak_rss_largest_worker_mb']:.0f}" if x.get("peak_rss_largest_worker_mb") else "-"
        lines.append(f"| {x['layout']} | {x['executor']} | {x['workers']} | {x['person_articles']:,} | "
                     f"{x['person_articles_per_s']:.0f} | {x['person_articles_per_s_end_to_end']:.0f} | "
                     f"{x['ratio_end_to_end_over_pass2']:.2f} | {x['write_s']:.1f} | "
                     f"{x['peak_rss_main_mb']:.0f} / {worker} |")
    lines += ["", "Same records from every layout, executor and worker count (equal data fingerprints): "
              f"**{'yes' if r['same_records'] else 'NO'}**."]
    return "\n".join(lines)


def data_build_scale() -> str:
    """Pass 2 (reading and matching) of a generated 100,000-article dump, 1 and 2 workers."""
    src = f"{RES}/data_build_speed.json"
    r = _load(src)
    runs = {(x["dump"], x["workers"]): x for x in r["runs"]}
    s1, f1, s2, f2 = (runs.get(k) for k in (("small", 1), ("full", 1), ("small", 2), ("full", 2)))
    g, pr, peer = r["generated"], r.get("projection") or {}, r.get("peer_text_cleaning") or {}
    out = (f"Measured on a generated {f1['person_articles']:,}-article dump on {r['machine']['cpus']} cores (`{src}`, "
           f"load average {r['loadavg_before'][0]:.1f} before, {r['loadavg_after'][0]:.1f} after): "
           f"**{f1['person_articles_per_cpu_s']:.0f} person articles per CPU-second with one worker, "
           f"{f2['person_articles_per_cpu_s']:.0f} with two ({f2['person_articles_per_s']:.0f} articles/s wall)**, "
           f"against a target of {r['target_person_articles_per_s_per_core']}; peak memory "
           f"{s1['peak_rss_main_mb']:.0f} -> {f1['peak_rss_main_mb']:.0f} MB (main process, 1 worker) and "
           f"{s2['peak_rss_main_mb']:.0f} -> {f2['peak_rss_main_mb']:.0f} MB / {s2['peak_rss_largest_worker_mb']:.0f} -> "
           f"{f2['peak_rss_largest_worker_mb']:.0f} MB (main / worker, 2 workers) when the dump grows "
           f"{f1['person_articles'] // s1['person_articles']}-fold from {s1['person_articles']:,} to "
           f"{f1['person_articles']:,} articles.")
    if peer:
        out += (f" Wikitext cleaning alone is {peer['ratio_ours_over_peer']:.0f}x faster than {peer['peer']} "
                f"({peer['ours_articles_per_s']:,.0f} vs {peer['peer_articles_per_s']:,.0f} articles/s, same process).")
    if pr:
        out += (f" Projection for English Wikipedia ({pr['person_articles'] / 1e6:.1f}M person articles): pass 2 about "
                f"{pr['pass2_cpu_hours']:.1f} CPU-hours ({pr['pass2_hours_on_16_cores'] * 60:.0f} minutes on 16 cores), "
                f"pass 1 about {pr['pass1_hours'] * 60:.0f} minutes ({pr['assumption']}).")
    return out


def _rule_name(config: dict) -> str:
    """The `wgb data build` flags of a selection rule, from the config the results file records."""
    if not config["require_head"]:
        return "paper's rule (default)"
    return "`--require-head --pronouns`" if config["pronouns"] else "`--require-head`"


def distant_vs_release() -> str:
    """Recall of the release's sentence selections per relation and configuration."""
    src = f"{RES}/distant_vs_release.json"
    r = _load(src)
    configs = sorted(r["configs"].values(), key=lambda c: (c["config"]["require_head"], c["config"]["pronouns"]))
    rels = ["spouse", "hypernym", "birthDate", "birthPlace", "hypernym (name word)"]
    lines = [f"Shares of the release's selections our rules recover, given each of its {r['entities']:,} head "
             f"entities' own sentences and tails (`{src}`; every miss is counted by cause in "
             "`distant_vs_release.md`); in brackets, without the release's matches of a word of the tail "
             "(inside a longer word, a word that names nothing alone, a surname the spouse shares with the head):",
             "", "| relation | target | " + " | ".join(_rule_name(c["config"]) for c in configs) + " |",
             "|---|---|" + "---|" * len(configs)]
    for rel in rels:
        t = r["targets"].get(rel)
        cells = []
        for c in configs:
            x = c["relations"][rel]
            cells.append(f"{x['recall_of_release']:.3f} ({x['recall_without_release_word_matches']:.3f})")
        lines.append(f"| {rel} | {f'>= {t:.2f}' if t else 'counted apart'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def pbg_scaling() -> str:
    """PBG from the CLI: partitions, ranks, memory; and the projection."""
    src, proj = f"{RES}/kge_pbg_scaling.json", f"{RES}/kge_pbg_projection.json"
    r = _load(src)
    sy = r.get("synthetic", {})
    lines = [f"Measured on {r['cpus']} shared cores (`{src}`, table and columns in `kge_pbg_scaling.md`): FB13 "
             f"and a synthetic graph of {sy.get('entities', 0):,} entities ({sy.get('entities_vs_fb13')}x FB13) and "
             f"{sy.get('counts', {}).get('train', 0):,} train triples ({sy.get('train_vs_fb13')}x), TransE dim "
             f"{r['dim']}, 1 Hogwild worker per rank.", "",
             "| run | partitions | ranks | epochs | wall s | train s | peak RSS `wgb` MB | training PSS MB (per rank) | "
             "Hits@10 (FB13 sample) |", "|---|---|---|---|---|---|---|---|---|"]
    for x in r["runs"]:
        s0 = x["rank0"]
        pss = [s0["peak_memory_mb"]["training_processes_pss"]] + [
            o["peak_memory_mb"]["training_processes_pss"] for o in x.get("other_ranks", [])]
        q = x.get("quality") or {}
        lines.append(f"| {x['label']} | {x['partitions']} | {x['machines']} | {x['epochs']} | {x['wall_seconds']:.0f} | "
                     f"{s0['seconds']['train_seconds']:.0f} | {s0['peak_memory_mb']['main_process_rss']:,.0f} | "
                     f"{' + '.join(f'{v:,.0f}' for v in pss)} | "
                     f"{q['hits_at_10']:.3f} |" if q else
                     f"| {x['label']} | {x['partitions']} | {x['machines']} | {x['epochs']} | {x['wall_seconds']:.0f} | "
                     f"{s0['seconds']['train_seconds']:.0f} | {s0['peak_memory_mb']['main_process_rss']:,.0f} | "
                     f"{' + '.join(f'{v:,.0f}' for v in pss)} | - |")
    det = r.get("determinism")
    if det:
        a, b = det["seeded (deterministic=true)"], det["as shipped (deterministic=false)"]
        lines += ["", f"Two runs of one seed (FB13, {det['partitions']} partitions, 1 worker): largest entity "
                  f"difference {a['max_abs_entity_diff']:.3g} with wgb's seeding (bit-identical: "
                  f"{'yes' if a['identical'] else 'no'}), {b['max_abs_entity_diff']:.3g} with PBG's as shipped."]
    if _exists(proj):
        p = _load(proj)
        m = p["measured"]
        lines += ["", f"Projection on paper (`{proj}`, assumptions in `kge_pbg_projection.md`), from "
                  f"{m['steady_edges_per_second_one_worker']:,.0f} edges a second per worker, 16 workers a machine "
                  "assumed to scale linearly, 10 epochs:", "",
                  "| graph | machines | partitions | training GB / machine | train hours | checkpoint GB |",
                  "|---|---|---|---|---|---|"]
        for name, sc in p["scenarios"].items():
            for plan in sc["plans"]:
                lines.append(f"| {name.split(':')[0]}: {sc['scenario']['entities'] / 1e6:,.0f}M entities, "
                             f"{sc['scenario']['edges'] / 1e6:,.0f}M edges | {plan['machines']} | {plan['partitions']} | "
                             f"{plan['training_memory_per_machine_gb']:.1f} | {plan['train_hours']:.1f} | "
                             f"{plan['checkpoint_disk_gb']:.0f} |")
    return "\n".join(lines)



def re_speed_pcnn() -> str:
    """PCNN+attention against OpenNRE: median of the alternating pairs, warm-up excluded (1 and 2 threads;
    the default dense convolution, then the gather convolution)."""
    import statistics

    out = []
    for src in ("benchmarks/results/re_speed.json", "benchmarks/results/re_speed_2t.json",
                "benchmarks/results/re_speed_gather_1t.json", "benchmarks/results/re_speed_gather_2t_idle.json",
                "benchmarks/results/re_speed_gather_2t.json"):
        path = ROOT / src
        if not path.exists():
            continue
        d = json.loads(path.read_text(encoding="utf-8"))
        v = d["vs_opennre"]["pcnn+attention"]
        pairs = v["pairs"]
        ours = statistics.median(p["ours"]["wall_s"] for p in pairs)
        peer = statistics.median(p["opennre"]["wall_s"] for p in pairs)
        wall = [p["ratio_wall"] for p in pairs]
        loads = [x for p in pairs for x in (p["load_before"][0], p["load_after"][0])]
        impl = f" ({d['ours_impl']} convolution)" if d.get("ours_impl") else ""
        out.append(f"- {d['threads']} torch thread(s): PCNN+attention{impl} epoch {ours:.1f} s against OpenNRE "
                   f"{v['opennre'].split()[2]}'s {peer:.1f} s (medians): "
                   f"**{d['speedup_vs_opennre']['pcnn+attention']:.2f}x** wall (median of {len(pairs)} alternating "
                   f"pairs, range {min(wall):.2f}-{max(wall):.2f}), {d['cpu_ratio_vs_opennre']['pcnn+attention']:.2f}x "
                   f"CPU time; {v['warmup_epochs']} warm-up epoch excluded on both sides; 1-minute load "
                   f"{min(loads):.1f}-{max(loads):.1f} on {d['cpu_count']} shared cores (`{src}`).")
    return "\n".join(out) or "Not measured yet."


def re_step_profile(src: str = "benchmarks/results/re_step_profile.json") -> str:
    """Where a PCNN + attention epoch goes, ours and OpenNRE's, and the ceiling that leaves."""
    r = _load(src)
    o, p = r["sides"]
    return (f"Profiled in one run ({r['threads']} torch thread, 1-minute load {_load_range(r['load_start'], r['load_end'])} "
            f"on {r['cpu_count']} cores, shared with other work where the load exceeds them): the convolution's matrix products are {o['arithmetic_share']:.0%} of our "
            f"epoch ({o['arithmetic_s']:.1f} of {o['epoch']['cpu_s']:.1f} CPU s, {o['arithmetic_flops'] / 1e9:.0f} GFLOP "
            f"at {o['arithmetic_gflops_per_s']:.0f} GFLOP/s) and {p['arithmetic_share']:.0%} of OpenNRE's "
            f"({p['arithmetic_flops'] / 1e9:.0f} GFLOP, {r['flops_ratio']}x ours: it pads every sentence to "
            f"{r['max_length']} tokens). This run's ratio is {r['ratio_cpu']}x (CPU); if everything of ours but those "
            f"products took no time it would be **{r['ceiling_cpu']}x**, the ceiling of the dense convolution against "
            f"OpenNRE on this machine. Beyond it, only fewer or cheaper FLOPs help: the gather convolution does "
            f"fewer (its floor: `benchmarks/results/re_floor.md`); lower precision and frozen word vectors change "
            f"the numbers, a GPU changes the machine (`{src}`).")


def re_equivalence_confirm(src: str = f"{RES}/re_equivalence_confirm.json", encoder: str = "pcnn",
                           plan: str = "benchmarks/results/re_equivalence_plan.md") -> str:
    """The confirmatory equivalence study of PCNN's gather convolution: its verdict and, per quantity of
    the argmax rule, the paired difference's 90% interval against the margin."""
    r = _load(src)
    s = r["summary"][encoder]
    a = s["argmax"]["quantities"]
    margin = a[0]["margin"]
    lines = [f"Confirmatory study (plan committed before its runs: `{plan}`; "
             f"`{src}`): {encoder.upper()}+attention, {len(s['seeds'])} paired seeds ({min(s['seeds'])}-{max(s['seeds'])}), "
             f"gather - dense, two one-sided t tests at 5% against a margin of {margin} F1 on every quantity of "
             f"the argmax rule: **{s['argmax'].get('verdict', s.get('verdict'))}**.", "",
             "| quantity | dense mean | gather mean | mean difference | 90% interval | TOST |", "|---|---|---|---|---|---|"]
    for q in a:
        lines.append(f"| {q['quantity']} | {q['old_mean']:.4f} | {q['new_mean']:.4f} | {q['mean']:+.4f} | "
                     f"[{q['ci_low']:+.4f}, {q['ci_high']:+.4f}] | {q['verdict']} |")
    return "\n".join(lines)


def re_fold_runs(src: str = f"{RES}/re_fold_runs.json") -> str:
    """One cross-fitted fold run per encoder and convolution path, paired, one after another."""
    r = _load(src)
    m = r["meta"]
    loads = [x["load_before"] for x in r["runs"]] + [x["load_after"] for x in r["runs"]]
    lines = [f"One cross-fitted fold run (fold 0 of 5, at most 10 epochs with early stopping, Word2Vec from an "
             f"empty cache, prediction and evaluation of the held-out fold) per encoder and path, {m['threads']} "
             f"torch thread(s), one run at a time; 1-minute load {_load_range(*loads)} on {m['cpu_count']} cores "
             f"(`{src}`):", "",
             "| encoder | path | epochs | s / epoch | fold-run wall (s) |", "|---|---|---|---|---|"]
    for x in r["runs"]:
        lines.append(f"| {x['encoder']} | {x['path']} | {x['epochs_run']} | {x['mean_epoch_train_s']:.1f} | "
                     f"{x['wall_s']:.0f} |")
    lines += ["", "| encoder | dense / gather, fold-run wall | per epoch |", "|---|---|---|"]
    for enc, v in r["summary"].items():
        lines.append(f"| {enc} | {v['wall_ratio']:.2f}x | {v['epoch_ratio']:.2f}x |")
    return "\n".join(lines)


BLOCKS = {"re-step-profile": re_step_profile, "re-speed-pcnn": re_speed_pcnn, "kge-speed": kge_speed, "kge-thesis": kge_thesis, "re-speed-gru": re_speed_gru, "re-speed-rnn-gather": re_speed_rnn_gather,
          "re-equivalence-confirm": re_equivalence_confirm,
          "re-equivalence-cnn": lambda: re_equivalence_confirm(f"{RES}/re_equivalence_cnn.json", "cnn",
                                                               "benchmarks/results/re_equivalence_cnn_plan.md"), "re-fold-runs": re_fold_runs,
          "data-build-speed": data_build_speed, "data-build-scale": data_build_scale, "distant-vs-release": distant_vs_release, "pbg-scaling": pbg_scaling}
