"""Bias in the data itself (Bourli 2021, ch. 3): no embeddings needed.

For attribute values a, b with A, B persons and A_o, B_o of them holding item o:

* equal opportunity, difference: ``A_o/A - B_o/B``
* equal opportunity, ratio: ``(A_o/A) / (B_o/B)``
* equal number, difference: ``(A_o - B_o) / (A_o + B_o)``
* equal number, ratio: ``A_o / B_o``

Ratios are mapped to [-1, 1] (``r<1: r-1``; ``r>1: 1-1/r``; ``r=1: 0``; ``B_o=0`` gives 1).
Items with ``|phi| <= t`` are neutral, the band t chosen at the knee of the neutral-count curve
(:func:`kge.bias.knee.choose_neutral_band`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kge.bias.context import GraphView, resolve
from kge.bias.knee import choose_neutral_band, fine_thresholds, neutral_curve
from kge.bias.result import BiasResult, BiasRow, BiasSpec

DEFINITIONS = ("eo_difference", "eo_ratio", "en_difference", "en_ratio")


def ratio_to_unit(r: np.ndarray) -> np.ndarray:
    """Map a ratio in [0, inf] to [-1, 1] as in Bourli §3.1.3 (inf -> 1, nan -> nan)."""
    r = np.asarray(r, dtype=float)
    out = np.full_like(r, np.nan)
    lo = r < 1
    hi = r > 1
    out[lo] = r[lo] - 1
    with np.errstate(divide="ignore"):
        out[hi] = 1 - 1 / r[hi]
    out[r == 1] = 0.0
    return out


def data_bias_scores(count_a, count_b, n_a: int, n_b: int) -> dict[str, np.ndarray]:
    """All four definitions for arrays of per-item counts (ratios already mapped to [-1, 1])."""
    ca = np.asarray(count_a, dtype=float)
    cb = np.asarray(count_b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = ca / n_a if n_a else np.full_like(ca, np.nan)
        pb = cb / n_b if n_b else np.full_like(cb, np.nan)
        eo_diff = pa - pb
        eo_ratio = ratio_to_unit(pa / pb)
        en_diff = (ca - cb) / (ca + cb)
        en_ratio = ratio_to_unit(ca / cb)
    return {"eo_difference": eo_diff, "eo_ratio": eo_ratio, "en_difference": en_diff, "en_ratio": en_ratio}


def label(phi: np.ndarray, t: float, a: str, b: str) -> list[str]:
    return [a if p > t else b if p < -t else "neutral" for p in phi]


@dataclass
class DataBias:
    """Registered as ``data``. Rows: one per target item held by someone in A or B."""

    definition: str = "eo_difference"
    t: float | None = None  # neutral band; None = knee of the neutral-count curve
    name: str = "data"
    needs_model: bool = False

    def __post_init__(self) -> None:
        if self.definition not in DEFINITIONS:
            raise ValueError(f"unknown data bias definition '{self.definition}'; expected one of {list(DEFINITIONS)}")

    def run(self, view: GraphView, model, spec: BiasSpec, *, seed: int = 0, model_label: str = "") -> BiasResult:
        g = resolve(view, spec)
        keep = (g.count_a + g.count_b) > 0
        scores = data_bias_scores(g.count_a[keep], g.count_b[keep], len(g.group_a), len(g.group_b))
        phi = scores[self.definition]
        t = choose_neutral_band(phi)[0] if self.t is None else float(self.t)
        ts = fine_thresholds()
        counts = neutral_curve(phi, ts)
        b_label = spec.b_label()
        labels = label(phi, t, spec.a, b_label)
        names = [n for n, k in zip(g.item_names, keep) if k]
        rows = [BiasRow(self.name, model_label or "data", spec.sensitive_relation, spec.a, spec.b,
                        spec.target_relation, n, float(p), int(ca), int(cb),
                        extra={**{d: float(scores[d][i]) for d in DEFINITIONS}, "label": lab})
                for i, (n, p, ca, cb, lab) in enumerate(zip(names, phi, g.count_a[keep], g.count_b[keep], labels))]
        summary = {"definition": self.definition, "t": t, "persons_a": int(len(g.group_a)),
                   "persons_b": int(len(g.group_b)), "items": int(keep.sum()),
                   "items_a": labels.count(spec.a), "items_b": labels.count(b_label),
                   "items_neutral": labels.count("neutral"),
                   "neutral_curve": {"t": ts.tolist(), "neutral": counts.tolist()}}
        return BiasResult(self.name, model_label or "data", spec, rows, summary,
                          config={"definition": self.definition, "t": self.t}, seed=seed)
