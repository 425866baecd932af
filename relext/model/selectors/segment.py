"""Segment operations over a flat batch of sentences with a bag id per sentence (no Python loop
per bag): sums, means, maxima and softmaxes within bags."""
from __future__ import annotations

import torch


def segment_sum(x: torch.Tensor, seg: torch.Tensor, num: int) -> torch.Tensor:
    out = x.new_zeros((num, *x.shape[1:]))
    return out.index_add(0, seg, x)


def segment_count(seg: torch.Tensor, num: int, dtype=torch.float32) -> torch.Tensor:
    return torch.zeros(num, dtype=dtype, device=seg.device).index_add(
        0, seg, torch.ones(seg.shape[0], dtype=dtype, device=seg.device))


def segment_mean(x: torch.Tensor, seg: torch.Tensor, num: int) -> torch.Tensor:
    counts = segment_count(seg, num, x.dtype).clamp(min=1)
    return segment_sum(x, seg, num) / counts.view(-1, *([1] * (x.dim() - 1)))


def segment_max(x: torch.Tensor, seg: torch.Tensor, num: int) -> torch.Tensor:
    index = seg.view(-1, *([1] * (x.dim() - 1))).expand_as(x)
    out = x.new_full((num, *x.shape[1:]), float("-inf"))
    return out.scatter_reduce(0, index, x, reduce="amax", include_self=True)


def segment_softmax(scores: torch.Tensor, seg: torch.Tensor, num: int) -> torch.Tensor:
    """Softmax of ``scores`` ([n] or [n, k]) within each bag, along dim 0."""
    top = segment_max(scores.detach(), seg, num)
    e = torch.exp(scores - top.index_select(0, seg))
    return e / segment_sum(e, seg, num).index_select(0, seg)
