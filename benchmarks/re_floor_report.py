"""Markdown of ``benchmarks/re_floor.py``'s results (``benchmarks/results/re_floor.md``)."""
from __future__ import annotations

G = 1e9


def _g(x: float) -> str:
    return f"{x / G:,.2f}"


def _stage_table(stages: dict) -> list[str]:
    lines = ["| stage | matrix-product GFLOP | other GFLOP | stream GB | gather GB |", "|---|---|---|---|---|"]
    for name, v in stages.items():
        lines.append(f"| {name} | {_g(v['gemm_flops'])} | {_g(v['other_flops'])} | {_g(v['stream_bytes'])} | "
                     f"{_g(v['gather_bytes'])} |")
    return lines


def _measured_rows(r: dict) -> dict:
    """(path, threads) -> [(label, seconds, kind)] of the measured epochs."""
    rows: dict = {}
    for key, t in r.get("timed", {}).items():
        p, th = key.split("@")
        rows.setdefault((p, th), []).append((f"here, {t['batches']} of {t['of']} batches x {len(t['rounds'])} rounds, "
                                             "extrapolated: median CPU s", t["cpu_s_median"], "cpu"))
        rows[(p, th)].append(("here, same: median wall s", t["wall_s_median"], "wall"))
    for name, c in r.get("committed", {}).items():
        p = name.split()[-1]
        th = str(c["threads"])
        if "cpu_s" in c:
            rows.setdefault((p, th), []).append((f"committed {name.split()[0]}: median CPU s", c["cpu_s"], "cpu"))
        rows.setdefault((p, th), []).append((f"committed {name.split()[0]}: wall s", c["wall_s"], "wall"))
    return rows


def reading(r: dict) -> list[str]:
    """The floor's verdict in words, from the numbers above (nothing typed in by hand)."""
    fl, timed, prof = r.get("floor", {}), r.get("timed", {}), r.get("profile")
    out = []
    for p in ("gather", "dense"):
        f, t = fl.get(f"{p}@1"), timed.get(f"{p}@1")
        if not f or not t:
            continue
        m = t["cpu_s_median"]
        out.append(f"- **{p}, 1 thread**: floor {f['floor_s']} s, {f['dominant']} dominate (FLOP time {f['flop_s']} s, of "
                   f"which matrix products {f['gemm_s']} s; byte time {f['byte_s']} s); FLOPs and bytes one after the "
                   f"other {f['sum_s']} s. Measured {m:.2f} CPU s per epoch here: **{m / f['floor_s']:.1f}x the floor**, "
                   f"{m / f['sum_s']:.1f}x the sequential sum.")
    f, t = fl.get("gather@1"), timed.get("gather@1")
    if prof and f and t:
        g, m = prof["groups"], t["cpu_s_median"]
        est = {k: v * m for k, v in g.items()}
        out.append(f"- **Where the gather path's {m:.2f} CPU s go** (the profile's shares of the measured epoch): "
                   f"matrix products {est.get('matrix products', 0):.2f} s (their floor {f['gemm_s']} s); gathers / "
                   f"scatters {est.get('gathers / scatters', 0):.2f} s (the gather bytes' time {f['gather_s']} s); other "
                   f"ATen operators (elementwise, copies, allocation) {est.get('other aten (elementwise, copies, allocation)', 0):.2f} s "
                   f"(the stream bytes' time {f['stream_s']} s); integer index bookkeeping "
                   f"{est.get('index bookkeeping (integer)', 0):.2f} s (outside the floor: indices are counted as read "
                   f"once); autograd nodes and Python functions {est.get('autograd nodes / Python functions', 0):.2f} s.")
    thr = r.get("throughput", {}).get("2")
    f2, f1 = fl.get("gather@2"), fl.get("gather@1")
    if thr and f2 and f1:
        gr = [v["gflop_s"] for v in thr["gemm"].values()]
        mr = [v["gb_s"] for v in thr["memory"].values() if v["class"] == "gather"]
        t2 = timed.get("gather@2")
        out.append(f"- **2 threads** (load {r['load_start']} -> {r.get('load_end')}, other jobs on both cores): the "
                   f"2-thread rates range {min(gr)}-{max(gr)} GFLOP/s across the product shapes and {min(mr)}-{max(mr)} GB/s "
                   f"across the gathers (best of {r['best_of']}), so the 2-thread floor here ({f2['floor_s']} s) and "
                   + (f"epoch ({t2['wall_s_median']:.1f} wall s) " if t2 else "")
                   + "measure the contention for the cores (issue 39 item 5), not the hardware. On 2 idle cores the "
                   f"floor is at least the 1-thread floor / 2 = {f1['floor_s'] / 2:.3f} s.")
    return ["## Reading", "", *out, ""] if out else []


def render_md(r: dict) -> str:
    m = r["machine"]
    lines = [
        "# re_floor: the physical floor of a PCNN+attention training epoch", "",
        f"Command: `{r['command']}`. {m['cpu']}, {m['cpu_count']} cores ({m['usable_cores']} usable), L3 {m['l3']}; "
        f"torch {m['torch']} ({m['blas']}, {m['avx']}), numpy {m['numpy']}, Python {m['python']}; glibc heap kept: "
        f"{r['keep_heap']}; OMP_WAIT_POLICY {m['omp_wait_policy']}. Started {r['started']}, finished "
        f"{r.get('finished', '(running)')}" + (f" (floor and text recomputed from the stored measurements by "
        f"`--rerender` at {r['rerendered']})" if r.get("rerendered") else "")
        + f"; load average (1/5/15 min) {r['load_start']} at the start, {r.get('load_end')} at the end. The "
        "machine is shared (other jobs on its 2 cores): every throughput below is the **best of "
        f"{r['best_of']}** repeats (by the wall clock and by CPU time), the least disturbed one; each measurement "
        "carries its loads.", "",
    ]
    c = r.get("counts")
    if c:
        e, d = c["epoch"], r["dims"]
        lines += [
            "## The epoch, from its real batches", "",
            f"{e['batches']} batches of {r['batch_size']} bags ({e['bags']} bags, {e['sentences']} sentences): "
            f"**{e['tokens']:,} real tokens** against {e['window_tokens']:,} in the {d['max_length']}-token window "
            f"({e['tokens'] / e['window_tokens']:.1%}); **{e['unique_words']:,} distinct words** summed over the batches "
            f"(median {e['median_unique_words']:,} per batch, against a median {e['median_tokens']:,} tokens); "
            f"the dense path convolves {e['padded']:,} positions ({e['buckets']} length buckets of {d['bucket_size']}, "
            f"mean {e['mean_bucket_rows']:,} rows); {e['nonempty_pieces']:,} non-empty pieces of {3 * e['sentences']:,}. "
            f"Dimensions: hidden {d['hidden']}, window {d['kernel']}, word {d['word_dim']}, position {d['pos_dim']} x 2, "
            f"{d['vocab']:,} word rows; {r['optimizer']}.", "",
            "FLOPs and bytes per epoch (forward + backward + SGD step). *Minimal*: every stage of the algorithm "
            "reads its operands and writes its result once (float32 values, 4-byte indices; elementwise chains "
            "fused); *gather* bytes go through an index (table rows), *stream* bytes do not. *As implemented*: every "
            "ATen operator the code runs, its inputs and outputs once (gathers: the rows they touch), counted over a "
            "real training epoch.", "",
            "| path | matrix-product GFLOP | other GFLOP | minimal stream GB | minimal gather GB | as implemented: "
            "stream GB | gather GB | matrix-product GFLOP | operator calls |", "|---|---|---|---|---|---|---|---|---|"]
        for p, t in c["totals"].items():
            tr = r.get("traffic", {}).get(p)
            impl = (f"{_g(tr['stream_bytes'])} | {_g(tr['gather_bytes'])} | {_g(tr['gemm_flops'])} | {tr['calls']:,}"
                    if tr else "- | - | - | -")
            lines.append(f"| {p} | {_g(t['gemm_flops'])} | {_g(t['other_flops'])} | {_g(t['stream_bytes'])} | "
                         f"{_g(t['gather_bytes'])} | {impl} |")
        lazy = c["sgd_lazy"]
        lines += ["", f"SGD with weight decay on the touched rows only (lazy decay): {_g(lazy['other_flops'])} GFLOP, "
                  f"{_g(lazy['stream_bytes'] + lazy['gather_bytes'])} GB per epoch, in place of the trainer's "
                  f"{_g(c['stages']['gather']['sgd step']['other_flops'])} GFLOP, "
                  f"{_g(c['stages']['gather']['sgd step']['stream_bytes'])} GB (every word row, every step).", ""]
        for p in c["stages"]:
            lines += [f"### Stages, {p} path (minimal counts, per epoch)", "", *_stage_table(c["stages"][p]), ""]
        for p, tr in r.get("traffic", {}).items():
            lines += [f"As implemented, {p} path: the operators moving the most bytes (one real epoch counted, "
                      f"load {tr['load_before']} -> {tr['load_after']})", "",
                      "| operator | calls | stream GB | gather GB | matrix-product GFLOP |", "|---|---|---|---|---|"]
            lines += [f"| {o['op']} | {o['calls']:,} | {_g(o['stream_bytes'])} | {_g(o['gather_bytes'])} | "
                      f"{_g(o['gemm_flops'])} |" for o in tr["top_ops"]]
            lines.append("")
    for t, th in r.get("throughput", {}).items():
        lines += [f"## Measured throughput, {t} thread(s) (best of {r['best_of']}, float32)", "",
                  "By the wall clock, and by the process's CPU time (at 1 thread: the time the thread ran; at 2 "
                  "threads CPU time adds both threads, so only the wall-clock rate is a rate).", "",
                  "| matrix product | shape [m, k, n] | GFLOP/s (wall) | GFLOP/s (CPU) | load before | load after |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {k} | {v['shape']} | {v['gflop_s']} | {v['gflop_s_cpu']} | {v['load_before']} | {v['load_after']} |"
                  for k, v in th["gemm"].items()]
        lines += ["", "| memory | class | GB/s read + written (wall) | (CPU) | load before | load after |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {k} | {v['class']} | {v['gb_s']} | {v['gb_s_cpu']} | {v['load_before']} | {v['load_after']} |"
                  for k, v in th["memory"].items()]
        lines.append("")
    lines += reading(r)
    if r.get("floor"):
        meas = _measured_rows(r)
        lines += [
            "## The floor against the measured epoch", "",
            "FLOP time: each matrix-product group at its own measured rate, the other FLOPs at the best product "
            "rate. Byte time: minimal stream bytes at the best copy rate; minimal gather bytes of the taps' sums at "
            "their own measured `embedding_bag` rates (forward; the backward's sorted form), the other gather bytes "
            "at the best gather rate (*all best*: every gather byte at the best gather rate, a looser bound). "
            "Floor = max(FLOP time, byte time): no exact float32 implementation of this algorithm's stages trains an epoch faster on this "
            "machine at that thread count. Rates: at 1 thread by CPU time (compared with the epoch's CPU seconds), "
            "at 2 threads by the wall clock (compared with wall seconds). *touched rows*: the SGD step with a lazy "
            "weight decay on the touched word rows only.", "",
            "| path | threads | SGD | FLOP s (products) | byte s (all best) | **floor s** | dominant | measured | "
            "measured / floor |", "|---|---|---|---|---|---|---|---|---|"]
        for key, f in r["floor"].items():
            p, rest = key.split("@")
            th, lazy = rest.split("+")[0], rest.endswith("+lazy")
            ms = meas.get((p, th), [])
            shown = ms if th == "1" else [x for x in ms if x[2] == "wall"]
            mtxt = "; ".join(f"{lab} {s:.2f}" for lab, s, _ in shown) or "-"
            ratio = "; ".join(f"{s / f['floor_s']:.1f}x" for _, s, _ in shown) or "-"
            lines.append(f"| {p} | {th} | {'touched rows' if lazy else 'every row'} | {f['flop_s']} ({f['gemm_s']}) | "
                         f"{f['byte_s']} ({f['byte_s_best']}) | **{f['floor_s']}** | {f['dominant']} | {mtxt} | {ratio} |")
        lines += ["", "At 1 thread the measured figure is CPU seconds (on busy cores wall time includes waiting for "
                  "the core); at 2 threads wall seconds (CPU seconds add both threads)."]
        one = {k.split("@")[0] + k.split("@")[1][1:]: f for k, f in r["floor"].items() if k.split("@")[1].startswith("1")}
        if one:
            lines += ["", "Two idle cores can at best halve the 1-thread floor: " + "; ".join(
                f"{k.replace('+lazy', ' (touched rows)')} {f['floor_s'] / 2:.3f} s" for k, f in one.items()) + "."]
        lines.append("")
        for key, t in r.get("timed", {}).items():
            lines += [f"Timed here, {key.replace('@', ' path, ')} thread(s): " + "; ".join(
                f"wall {x['wall_s']} s, CPU {x['cpu_s']} s (load {x['load_before']} -> {x['load_after']})"
                for x in t["rounds"]) + " (extrapolated to the epoch)."]
        lines.append("")
    prof = r.get("profile")
    if prof:
        lines += [f"## Where the gather path's time goes ({prof['batches']} batches under torch.profiler, 1 thread, "
                  f"load {prof['load_before']} -> {prof['load_after']})", "",
                  "Self CPU time as torch.profiler measures it: time on the thread while the operator runs (on busy "
                  "cores it includes waits for the core), so the shares are the figure to read. "
                  f"Matrix products {prof['gemm_share']:.0%} of {prof['operator_cpu_s']} operator CPU s. By group: "
                  + "; ".join(f"{k} {v:.0%}" for k, v in prof.get("groups", {}).items()) + ".", "",
                  "| operator | self CPU s | share | calls |", "|---|---|---|---|"]
        lines += [f"| {o['op']} | {o['self_cpu_s']} | {o['share']:.1%} | {o['calls']} |" for o in prof["top_ops"]]
        lines.append("")
    return "\n".join(lines) + "\n"
