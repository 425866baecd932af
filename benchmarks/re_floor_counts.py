"""FLOPs and bytes of one PCNN+attention training step, counted from a real batch (issue 39, item 4:
the physical floor). Used by ``benchmarks/re_floor.py``; tested in ``tests/relext/test_re_floor.py``.

Two counts:

* :func:`step_counts`, **analytic**, per stage of the algorithm (forward, backward, optimizer), from a
  batch's statistics (:func:`batch_stats`: sentences, bags, real tokens, distinct words, the dense
  path's bucket shapes). FLOPs split into matrix products (``gemm``) and the rest (``other``: adds of
  the gathered rows, max, masks, the attention, SGD's updates; a compare counts as one). Bytes are the
  *minimal traffic of this algorithm*: every stage reads its operands and writes its result once
  (elementwise chains inside a stage fused; no reuse of caches between stages), float32 values 4
  bytes, index entries 4 bytes. ``gather`` bytes are the rows read or written through an index (the
  taps' table rows, the pooled rows, the touched embedding rows); ``stream`` bytes the rest.
* :class:`OpTraffic`, **as implemented**: a ``TorchDispatchMode`` that adds up, for every ATen operator
  the step runs (the backward's included), the bytes of its tensor inputs and outputs (views: none;
  gathers and scatters: only the rows they touch; broadcast operands: their distinct elements) and the
  FLOPs of its matrix products. What the current code moves if every operator went to memory once.

Dimensions (:class:`Dims`): OpenNRE's PCNN (hidden 230, window 3, word 50, position 5 x 2, 3 pieces,
a 120-token window), 5 classes, SGD with weight decay; ``vocab`` rows in the word table.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

F32 = 4          # bytes of a float32
IDX = 4          # bytes of an index entry in the minimal count (int32 suffices)


@dataclass(frozen=True)
class Dims:
    vocab: int
    hidden: int = 230
    kernel: int = 3
    word_dim: int = 50
    pos_dim: int = 5
    max_length: int = 120
    classes: int = 5
    pieces: int = 3
    bucket_size: int = 64

    @property
    def channels(self) -> int:
        return self.word_dim + 2 * self.pos_dim

    @property
    def small_params(self) -> int:
        """Every parameter but the word table: position tables, filters and bias, attention
        diagonal, classifier."""
        h, r = self.hidden, self.pieces * self.hidden
        return (2 * 2 * self.max_length * self.pos_dim + h * self.channels * self.kernel + h + r
                + r * self.classes + self.classes)


def batch_stats(batch: dict, num_bags: int, bucket_size: int = 64) -> dict:
    """The numbers the counts need from one real batch (``SentenceTable.gather`` output): sentences
    ``n``, ``bags``, real tokens ``N`` (lengths capped at the batch's width), distinct words among them
    ``U``, the non-empty pieces, and the dense path's buckets (``bucket_size`` sentences sorted by
    length, each as wide as its longest: ``padded`` positions convolved, ``padded_in`` embedded rows
    with the ``kernel // 2`` zero rows each side added by the caller as ``2 * p * n``)."""
    tok = batch["tokens"]
    n, w = tok.shape
    lengths = batch["lengths"].clamp(max=w)
    mask = torch.arange(w).unsqueeze(0) < lengths.unsqueeze(1)
    real = tok[mask]
    pieces = batch["pieces"]
    nonempty = sum(int(((pieces == k) & mask).any(1).sum()) for k in (1, 2, 3))
    if bucket_size <= 0 or n <= bucket_size:
        groups = [lengths]
    else:
        groups = list(torch.sort(lengths, stable=True).values.split(bucket_size))
    padded = sum(len(g) * max(int(g.max()), 1) for g in groups)
    return {"sentences": n, "bags": int(num_bags), "tokens": int(lengths.sum()), "unique_words": int(torch.unique(real).numel()),
            "nonempty_pieces": nonempty, "padded": padded, "buckets": len(groups), "width": w}


def _stage(gemm=0, other=0, stream=0, gather=0) -> dict:
    return {"gemm_flops": int(gemm), "other_flops": int(other), "stream_bytes": int(stream), "gather_bytes": int(gather)}


def shared_counts(st: dict, d: Dims, *, lazy_decay: bool = False) -> dict[str, dict]:
    """Attention, classifier, loss and the SGD step: the same on both convolution paths.

    ``lazy_decay=False``: the trainer's SGD, weight decay on every element of every parameter each
    step (the word table's gradient is dense: zero-filled, its touched rows added, then read with the
    table and the table written). ``True``: only the touched word rows (their decay of the skipped
    steps applied in closed form when next touched; exact in real arithmetic)."""
    n, b, r, c = st["sentences"], st["bags"], d.pieces * d.hidden, d.classes
    out = {
        # query rows (diag * classifier row) gathered per sentence, logits (dot), segment softmax,
        # weighted sum into the bags; classifier on the dropped-out bag vectors; cross-entropy
        "attention+classifier fwd": _stage(gemm=2 * b * r * c, other=n * r + 2 * n * r + 5 * n + 2 * n * r + b * r + 5 * b * c,
                                           stream=(2 * n * r + 2 * b * r) * F32, gather=n * r * F32),
        # d(weighted sum): grad of rep (w * g) and of w (dot); softmax; d(logits): grad of rep
        # (+= dl * q) and of q (scattered into the class rows); classifier's two products
        "attention+classifier bwd": _stage(gemm=2 * 2 * b * r * c, other=8 * n * r + 5 * n + b * r,
                                           stream=(3 * n * r + 2 * b * r) * F32, gather=2 * n * r * F32),
    }
    small = d.small_params
    rows = st["unique_words"] if lazy_decay else d.vocab
    # p <- p - lr * (g + wd * p): 4 FLOPs an element; read p and g, write p (+ the dense gradient's fill)
    fill = 0 if lazy_decay else d.vocab * d.word_dim * F32
    out["sgd step" + (" (touched rows)" if lazy_decay else "")] = _stage(
        other=4 * (rows * d.word_dim + small),
        stream=3 * small * F32 + fill + (0 if lazy_decay else 3 * rows * d.word_dim * F32),
        gather=3 * rows * d.word_dim * F32 if lazy_decay else 0)
    return out


def gather_counts(st: dict, d: Dims) -> dict[str, dict]:
    """``conv_impl="gather"``: each distinct word projected once for every tap, each real token's output
    the sum of ``kernel + 2`` gathered rows (``kernel`` word taps, two position rows), packed
    piecewise max."""
    nt, u, n, h, k = st["tokens"], st["unique_words"], st["sentences"], d.hidden, d.kernel
    p = k // 2
    s = k + 2                                                     # rows summed per token
    edge = (p + 1) ** 2 * 2 * d.max_length                        # position rows per table
    table = u * k + 2 * edge + 1
    slots = d.pieces * n
    return {
        "word rows gathered": _stage(stream=u * IDX, gather=u * d.word_dim * F32 * 2),
        "projection fwd (U x 50 @ 50 x 3H)": _stage(gemm=2 * u * d.word_dim * k * h,
                                                   stream=(u * d.word_dim + d.word_dim * k * h + u * k * h) * F32),
        "position rows fwd": _stage(gemm=2 * 2 * edge * k * d.pos_dim * h, other=edge * h,
                                    stream=2 * (edge * k * d.pos_dim + edge * h) * F32),
        "tap sum fwd (gather)": _stage(other=nt * (s - 1) * h, stream=nt * s * IDX + nt * h * F32, gather=nt * s * h * F32),
        "piecewise max fwd": _stage(other=nt * h + slots * h, stream=nt * IDX + nt * h * F32 + slots * h * F32),
        "piecewise max bwd": _stage(other=2 * nt * h, stream=nt * IDX + 2 * nt * h * F32 + slots * h * F32,
                                    gather=2 * nt * h * F32),
        "tap sum bwd (scatter)": _stage(other=nt * s * h, stream=nt * s * IDX + table * h * F32, gather=nt * s * h * F32),
        "projection bwd (2 products)": _stage(gemm=2 * 2 * u * d.word_dim * k * h,
                                              stream=(2 * u * k * h + 2 * u * d.word_dim + 2 * d.word_dim * k * h) * F32),
        "position rows bwd": _stage(gemm=2 * 2 * 2 * edge * k * d.pos_dim * h,
                                    stream=2 * (2 * edge * h + 2 * edge * k * d.pos_dim) * F32),
        "word rows grad (scatter)": _stage(other=u * d.word_dim, stream=u * IDX, gather=2 * u * d.word_dim * F32),
        **shared_counts(st, d),
    }


def dense_counts(st: dict, d: Dims) -> dict[str, dict]:
    """``conv_impl="dense"``: length-sorted buckets, each as wide as its longest sentence; embedded
    (with ``kernel // 2`` zero rows each side), im2col windows, one product per bucket; piecewise max
    over every convolved position."""
    m, n, h, k, c = st["padded"], st["sentences"], d.hidden, d.kernel, d.channels
    p = k // 2
    rows_in = m + 2 * p * n
    slots = (d.pieces + 1) * n
    return {
        "embedding fwd (gather)": _stage(stream=3 * rows_in * IDX + rows_in * c * F32, gather=rows_in * c * F32),
        "im2col windows": _stage(stream=(rows_in * c + m * k * c) * F32),
        "conv product fwd (M x 3C @ 3C x H)": _stage(gemm=2 * m * k * c * h, other=m * h,
                                                    stream=(m * k * c + k * c * h + m * h) * F32),
        "piecewise max fwd": _stage(other=m * h + slots * h, stream=m * IDX + m * h * F32 + slots * h * F32),
        "piecewise max bwd": _stage(other=2 * m * h, stream=m * IDX + 2 * m * h * F32 + slots * h * F32,
                                    gather=2 * m * h * F32),
        "conv products bwd (2 products + bias)": _stage(gemm=2 * 2 * m * k * c * h, other=m * h,
                                                         stream=(2 * m * h + 2 * m * k * c + m * k * c + 2 * k * c * h) * F32),
        "window fold bwd": _stage(other=m * k * c, stream=(m * k * c + rows_in * c) * F32),
        "embedding bwd (scatter)": _stage(other=rows_in * c, stream=rows_in * c * F32 + 3 * rows_in * IDX,
                                          gather=2 * rows_in * c * F32),
        **shared_counts(st, d),
    }


def step_counts(st: dict, d: Dims, path: str) -> dict[str, dict]:
    if path == "gather":
        return gather_counts(st, d)
    if path == "dense":
        return dense_counts(st, d)
    raise ValueError(f"path must be 'gather' or 'dense', got {path!r}")


def add_counts(total: dict[str, dict], step: dict[str, dict]) -> dict[str, dict]:
    for name, v in step.items():
        acc = total.setdefault(name, _stage())
        for key, x in v.items():
            acc[key] += x
    return total


def totals(counts: dict[str, dict]) -> dict:
    keys = ("gemm_flops", "other_flops", "stream_bytes", "gather_bytes")
    return {k: sum(v[k] for v in counts.values()) for k in keys}


# --------------------------------------------------------------------------- as implemented

aten = torch.ops.aten
_GEMM = {"mm": (0, 1), "addmm": (1, 2), "bmm": (0, 1), "baddbmm": (1, 2)}
_NO_TRAFFIC = {"view", "_unsafe_view", "reshape", "_reshape_alias", "expand", "slice", "select", "t", "transpose",
               "permute", "unsqueeze", "squeeze", "as_strided", "alias", "detach", "empty", "new_empty",
               "empty_strided", "empty_like", "unfold", "diagonal", "split", "split_with_sizes", "unbind",
               "lift_fresh", "_to_copy_noop", "set_", "resize_", "is_nonzero", "_local_scalar_dense", "sym_size",
               "sym_stride", "sym_numel", "sym_storage_offset", "expand_as", "view_as", "narrow"}
_WRITE_ONLY = {"zero_", "fill_", "zeros", "zeros_like", "new_zeros", "full", "full_like", "new_full", "ones",
               "ones_like", "arange", "scalar_tensor", "randperm"}


def _bytes(t) -> int:
    """Distinct bytes of a tensor (broadcast dimensions, stride 0, counted once)."""
    if not isinstance(t, torch.Tensor):
        return 0
    n = 1
    for size, stride in zip(t.shape, t.stride()):
        if stride != 0:
            n *= size
    return n * t.element_size()


def _tensors(x):
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from _tensors(y)


def _row_bytes(src: torch.Tensor, dim: int = 0) -> int:
    return (src.numel() // max(src.shape[dim], 1)) * src.element_size() if src.dim() else src.element_size()


class OpTraffic(TorchDispatchMode):
    """Adds up per ATen operator (by name): calls, bytes read and written (``stream`` and ``gather``)
    and matrix-product FLOPs, for everything run under it (forward, backward, optimizer)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: dict[str, dict] = defaultdict(lambda: {"calls": 0, "stream_bytes": 0, "gather_bytes": 0, "gemm_flops": 0})

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        rec = self.ops[name]
        rec["calls"] += 1
        stream, gather = self._traffic(name, args, kwargs, out)
        rec["stream_bytes"] += stream
        rec["gather_bytes"] += gather
        if name in _GEMM:
            a, b = (args[i] for i in _GEMM[name])
            rec["gemm_flops"] += 2 * a.numel() * b.shape[-1]       # [.., m, k] @ [.., k, n]
        return out

    @staticmethod
    def _traffic(name, args, kwargs, out) -> tuple[int, int]:
        if name in _NO_TRAFFIC:
            return 0, 0
        written = sum(_bytes(t) for t in _tensors(out))
        if name in _WRITE_ONLY:
            return written, 0
        if name == "copy_":
            return _bytes(args[1]) + _bytes(args[0]), 0
        if name == "index_select":                                 # (src, dim, index)
            src, dim, idx = args[0], args[1], args[2]
            return _bytes(idx) + written, idx.numel() * _row_bytes(src, dim)
        if name == "embedding":                                    # (weight, indices)
            return _bytes(args[1]) + written, args[1].numel() * _row_bytes(args[0])
        if name in ("_embedding_bag", "_embedding_bag_forward_only"):   # (weight, indices, offsets, ...)
            extra = sum(_bytes(t) for t in _tensors(args[2:3]))
            return _bytes(args[1]) + extra + _bytes(out[0]), args[1].numel() * _row_bytes(args[0])
        if name in ("index_add", "index_add_"):                    # (self, dim, index, source)
            dst, dim, idx, src = args[0], args[1], args[2], args[3]
            whole = written if name == "index_add" else 0          # the functional form copies self
            return _bytes(idx) + _bytes(src) + whole, 2 * idx.numel() * _row_bytes(dst, dim)
        if name == "embedding_dense_backward":                     # (grad, indices, num_weights, ...)
            g, idx = args[0], args[1]
            return _bytes(g) + _bytes(idx) + written, 2 * idx.numel() * g.shape[-1] * g.element_size()
        read = sum(_bytes(t) for k, v in kwargs.items() if k != "out" for t in _tensors(v))
        read += sum(_bytes(t) for t in _tensors(args))
        return read + written, 0                                   # in place / out=: read, then written

    def summary(self) -> dict:
        ops = {k: dict(v) for k, v in self.ops.items()}
        return {"ops": ops, "stream_bytes": sum(v["stream_bytes"] for v in ops.values()),
                "gather_bytes": sum(v["gather_bytes"] for v in ops.values()),
                "gemm_flops": sum(v["gemm_flops"] for v in ops.values()),
                "calls": sum(v["calls"] for v in ops.values())}
