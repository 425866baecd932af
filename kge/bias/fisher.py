"""Fisher, Palfrey, Christodoulopoulos & Mittal (2020): bias through one fine-tuning step.

Each person's embedding takes one gradient-ascent step on
``m(e_j) = g(e_j, r_s, e_a) - g(e_j, r_s, e_b)`` (``e_j' = e_j + alpha * dm/de_j``) through the
model's own score function; the bias of item p (a profession) is the mean over all persons j of
``g(e_j', r_p, e_p) - g(e_j, r_p, e_p)``. Positive = the model finds p more likely for a "more a"
person. With ``b=None`` the score of b is replaced by the mean score over all other values of the
sensitive relation (the paper's suggestion for multi-valued attributes such as nationality).

Two ways to compute it, both vectorised over all persons x items:

* ``autograd``: gradients of m for all persons at once, then scores of every (person, item) pair
  before and after the step, in chunks of persons (works for every model);
* ``closed``: for scores affine in the head (``model.linear_in_head``: DistMult, ComplEx, ...)
  ``mean_j [g(e_j + a*grad_j) - g(e_j)] = g(a * mean_j grad_j) - g(0)``, so one score per item.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from kge.bias.context import GraphView, resolve
from kge.bias.embedding import _query_candidates, chunk_size, entity_matrix, model_name, pairwise_scores, score_change
from kge.bias.result import BiasResult, BiasRow, BiasSpec


def _m_grad(model, H: torch.Tensor, s_rel: int, a_id: int, b_ids: torch.Tensor, E: torch.Tensor) -> torch.Tensor:
    """d m / d h for every row of H (``[P, d]``), chunked."""
    out = torch.empty_like(H)
    ea = E[a_id]
    eb = E[b_ids]  # [V, d]
    step = chunk_size(len(b_ids) + 1, H.shape[1])
    for i in range(0, H.shape[0], step):
        h = H[i:i + step].clone().requires_grad_(True)
        n = h.shape[0]
        rs = torch.full((n,), s_rel, dtype=torch.long)
        sa = model.score_emb(h, rs, ea.expand(n, -1))
        if eb.shape[0] == 1:
            sb = model.score_emb(h, rs, eb.expand(n, -1))
        else:
            sb = model.score_emb(h[:, None, :], rs[:, None], eb[None, :, :]).mean(1)
        (g,) = torch.autograd.grad((sa - sb).sum(), h)
        out[i:i + step] = g
    return out


def fisher_bias(model, person_ids, s_rel: int, a_id: int, b_ids, t_rel: int, item_ids, *, alpha: float = 0.01,
                method: str = "auto") -> np.ndarray:
    """Bias score of every item (``[len(item_ids)]``), see the module docstring."""
    if method not in ("auto", "autograd", "closed"):
        raise ValueError(f"unknown method '{method}'; expected one of ['auto', 'autograd', 'closed']")
    linear = bool(getattr(model, "linear_in_head", False))
    if method == "closed" and not linear:
        raise ValueError(f"closed form needs a score linear in the head; {model_name(model)} is not")
    use_closed = method == "closed" or (method == "auto" and linear)
    E = entity_matrix(model)
    pid = torch.as_tensor(np.asarray(person_ids), dtype=torch.long)
    bid = torch.as_tensor(np.asarray(b_ids), dtype=torch.long).reshape(-1)
    iid = torch.as_tensor(np.asarray(item_ids), dtype=torch.long)
    H = E[pid]
    T = E[iid]  # [Q, d]
    Q = T.shape[0]
    with torch.enable_grad():
        G = _m_grad(model, H, s_rel, a_id, bid, E)
    with torch.no_grad():
        if use_closed:
            g = alpha * G.mean(0)
            rt = torch.full((Q,), t_rel, dtype=torch.long)
            after = model.score_emb(g.expand(Q, -1), rt, T)
            before = model.score_emb(torch.zeros_like(g).expand(Q, -1), rt, T)
            return (after - before).double().numpy()
        total = torch.zeros(Q, dtype=torch.float64)
        fast = _query_candidates(model, H[:1], t_rel, T[:1]) is not None
        step = max(1, (1 << 22) // max(1, Q)) if fast else chunk_size(Q, H.shape[1])
        for i in range(0, H.shape[0], step):
            h = H[i:i + step]
            h2 = h + alpha * G[i:i + step]
            d = score_change(model, h, h2, t_rel, T)
            if d is None:
                d = pairwise_scores(model, h2, t_rel, T) - pairwise_scores(model, h, t_rel, T)
            total += d.double().sum(0)
        return (total / max(1, H.shape[0])).numpy()


@dataclass
class Fisher:
    """Registered as ``fisher``. Rows: one per target item, with counts C_a, C_b."""

    alpha: float = 0.01
    method: str = "auto"  # auto | autograd | closed
    persons: str = "target"  # target: heads of the target relation; groups: only A and B persons
    name: str = "fisher"
    needs_model: bool = True

    def __post_init__(self) -> None:   # a step <= 0 turned every score's sign without a word
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not self.alpha > 0:
            raise ValueError(f"fisher: alpha (the step along the bias gradient) must be a number > 0, got {self.alpha!r}")

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        view.check_model(model)
        g = resolve(view, spec)
        if self.persons == "target":
            persons = g.persons
        elif self.persons == "groups":
            persons = np.union1d(g.group_a, g.group_b)
        else:
            raise ValueError(f"unknown persons '{self.persons}'; expected 'target' or 'groups'")
        t0 = time.perf_counter()
        scores = fisher_bias(model, persons, g.s_rel, g.a_id, g.b_ids, g.t_rel, g.items, alpha=self.alpha,
                             method=self.method)
        secs = time.perf_counter() - t0
        name = model_label or model_name(model)
        rows = [BiasRow(self.name, name, spec.sensitive_relation, spec.a, spec.b, spec.target_relation, n,
                        float(s), int(ca), int(cb))
                for n, s, ca, cb in zip(g.item_names, scores, g.count_a, g.count_b)]
        linear = bool(getattr(model, "linear_in_head", False))
        used = "closed" if self.method == "closed" or (self.method == "auto" and linear) else "autograd"
        summary = {"persons": int(len(persons)), "items": int(len(g.items)), "method": used,
                   "compute_seconds": secs, "b_values": int(len(g.b_ids))}
        return BiasResult(self.name, name, spec, rows, summary,
                          config={"alpha": self.alpha, "method": self.method, "persons": self.persons}, seed=seed)
