"""Du et al.: ``psi``, the link-prediction error, and its per-triple gradients, vectorised.

``psi`` is ``-model.score_emb`` (or its square for a distance model: the paper's
``||h + r - t||^2`` for L2 TransE), so it works for every registered model.
"""
from __future__ import annotations

import numpy as np
import torch

PSIS = ("auto", "negscore", "squared")


def _entity_weight(model) -> torch.Tensor:
    return model.entity.weight.detach()


def _device(model) -> torch.device:
    return model.entity.weight.device


def resolve_psi(model, psi: str = "auto") -> str:
    """The link-prediction error used: ``negscore`` = ``-score``; ``squared`` = ``score^2`` (for a
    distance model, the squared distance: the paper's ``||h + r - t||_2^2`` for L2 TransE).
    ``auto``: ``squared`` for TransE with the L2 norm, ``negscore`` for every other model."""
    if psi not in PSIS:
        raise ValueError(f"unknown psi {psi!r}; expected one of {list(PSIS)}")
    if psi != "auto":
        return psi
    if getattr(model, "name", "") == "transe" and getattr(model, "p_norm", 2) == 2:
        return "squared"
    return "negscore"


def _error(model, hv, r, tv, psi: str) -> torch.Tensor:
    s = model.score_emb(hv, r, tv)
    return s * s if psi == "squared" else -s


def psi(model, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor, *, kind: str = "auto",
        chunk: int = 65536) -> torch.Tensor:
    """Link-prediction error of id triples (see :func:`resolve_psi`), without gradients, chunked."""
    kind = resolve_psi(model, kind)
    w = _entity_weight(model)
    out = []
    with torch.no_grad():
        for i in range(0, len(h), chunk):
            out.append(_error(model, w[h[i:i + chunk]], r[i:i + chunk], w[t[i:i + chunk]], kind))
    return torch.cat(out) if out else torch.zeros(0, dtype=w.dtype)


def psi_grads(model, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor, *, kind: str = "auto",
              chunk: int = 65536, need_tail: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-triple gradients of the error w.r.t. the head and tail vectors, ``[N, entity_dim]`` each.

    Each row's head/tail vector is its own leaf, so one backward pass gives all per-triple
    gradients at once. Model parameters get no gradient.
    """
    kind = resolve_psi(model, kind)
    w = _entity_weight(model)
    gh, gt = [], []
    for i in range(0, len(h), chunk):
        hv = w[h[i:i + chunk]].clone().requires_grad_(True)
        tv = w[t[i:i + chunk]].clone().requires_grad_(need_tail)
        with torch.enable_grad():
            val = _error(model, hv, r[i:i + chunk], tv, kind)
            grads = torch.autograd.grad(val.sum(), [hv, tv] if need_tail else [hv])
        gh.append(grads[0])
        if need_tail:
            gt.append(grads[1])
    if not gh:
        z = torch.zeros(0, w.shape[1], dtype=w.dtype)
        return z, (z if need_tail else None)
    return torch.cat(gh), (torch.cat(gt) if need_tail else None)


def _ids(x: np.ndarray, device) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.int64), device=device)
