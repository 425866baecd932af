"""Du et al. 2022, "Understanding Gender Bias in Knowledge Base Embeddings".

What this package computes (``psi`` is the link-prediction *error*, i.e. ``-model.score_emb``, so it
works for every registered model; for TransE with squared L2 it is the paper's ``||h + r - t||^2``):

* **Group bias** of an occupation ``o`` (paper §3.1)::

      B_gr(o) = mean_{s in B(o)} psi(s, r_p, o) - mean_{s in A(o)} psi(s, r_p, o)

  ``A(o)`` / ``B(o)``: persons whose training gender triple is ``a`` / ``b`` (paper: male /
  female) and who have a training triple ``(s, r_p, o)``. Positive = biased towards ``a``.

* **Individual bias** of ``(s, r_p, o)`` (paper §3.2, Corollary 4): the change of
  ``psi(s, r_p, o)`` when ``s``'s gender triple is flipped and the model retrained, estimated by
  the influence function with the diagonal TransE Hessian (Lemma 1 / Remark 2)::

      B_in(s, o) = psi|_b - psi|_a
                 ~ <grad_s psi(s, r_p, o), grad_s psi(s, r_g, a) - grad_s psi(s, r_g, b)> / alpha_s

  For squared-L2 TransE this is exactly the paper's closed form
  ``-4 (s + r_p - o)^T (a - b) / alpha_s`` (see :func:`transe_individual_bias`). Gradients are taken
  through the model's own ``score_emb`` with autograd, vectorised over all pairs at once, so the
  same code runs on every model (for non-TransE models the diagonal Hessian is the TransE-derived
  approximation, not an exact one).

  ``alpha_e = N_e - 2|G|/|E|`` (expected Hessian of the margin loss with one uniformly corrupted
  negative per positive, ``N_e`` = degree of ``e`` in the training graph); it can be zero or
  negative for low-degree entities, so (Remark 3) we add a damping ``lambda``; with
  ``hessian="du"`` we use ``max(alpha_e, 0) + lambda`` (negative values would flip signs), with
  ``hessian="degree"`` ``N_e + lambda`` (no negative-sample term: exact when negatives are past the
  margin, as at convergence).

  **Scale.** Removing a training triple ``z`` from the *summed* loss moves the optimum by
  ``H_sum^{-1} grad L(z)``, and ``alpha_e`` above is a coefficient of ``H_sum``; the paper's
  Eq. 5 additionally divides by ``|G|`` (it mixes the averaged-loss ``epsilon = -1/|G|`` with the
  summed-loss Hessian). ``scale="consistent"`` (default) omits that factor, ``scale="paper"``
  applies it. It is a constant factor: rankings and correlations are identical.

* **Aggregation** per occupation: vanilla mean of ``B_in`` and the paper's gender-weighted
  average ``mean_{A(o)} B_in + mean_{B(o)} B_in`` (§3.3, printed as the sum of the two means).

* **Influence of each training triple on B_gr** (§3.1)::

      delta_z B_gr = sum_{e in {h, t}} <grad_e B_gr, grad_e psi(z)> / alpha_e

  = the first-order change of ``B_gr`` when ``z`` is removed and the model retrained (positive =
  removal pushes ``B_gr`` towards ``a``). Relation parameters are left out: their expected Hessian
  block is zero (Lemma 1), so only triples whose head or tail takes part in ``B_gr`` (``o`` and
  its persons) have non-zero influence, as the paper states. The negative sample paired with ``z``
  is not stored by our trainer and is left out (in expectation it touches ``B_gr``'s entities with
  probability ``~|persons| / |E|``).

* **Debiasing** (§4.3): adding ``c * |A - B|`` dummy entities linked only to the minority gender
  and ``o`` (``c = 0.5``, at most 10,000 per occupation), or removing the ``k`` training triples
  whose removal moves ``B_gr`` most towards zero; both followed by retraining (any
  ``train_fn(graph) -> model``, by default :func:`kge.train.train`). Removing a fixed ``k``
  overshoots (the influence function overestimates the real change several-fold);
  :func:`debias_to_target` removes in steps, re-estimates the influence on each retrained model,
  calibrates the step by the measured / predicted ratio and stops within ``tol`` of the target
  (:mod:`~kge.bias.du.stepwise`).

* **Validation** (§4.2): remove the top-``k`` triples for several ``k``, retrain, and correlate the
  summed predicted ``delta_z B_gr`` with the real change of ``B_gr`` (Pearson r).

Modules: :mod:`~kge.bias.du.groups` (persons, occupations, ``alpha_e``), :mod:`~kge.bias.du.psi`
(the error and its gradients), :mod:`~kge.bias.du.measures` (``B_gr``, ``B_in``),
:mod:`~kge.bias.du.influence` (``delta_z B_gr``), :mod:`~kge.bias.du.debias` (debiasing and
validation by retraining), :mod:`~kge.bias.du.stepwise` (removal that stops at a target), :mod:`~kge.bias.du.adapters` (the measures registered in ``kge.bias``).
Everything public is importable from ``kge.bias.du``.
"""
from __future__ import annotations
from __future__ import annotations

from kge.bias.du.adapters import MEASURES, DuGroupBias, DuIndividualBias, DuIndividualVanilla
from kge.bias.du.debias import (DebiasResult, TrainFn, ValidationResult, add_dummy_entities, debias_by_adding,
                                debias_by_removing, remove_triples, retrain_fn, validate_influence,
                                with_train_triples)
from kge.bias.du.groups import (HESSIANS, MEASURE_GROUP, MEASURE_INDIVIDUAL, MEASURE_INDIVIDUAL_VANILLA, SCALES,
                                DuGroups, build_groups, hessian_diagonal, train_triples)
from kge.bias.du.influence import InfluenceResult, TripleGradients, influence_all, triple_influence
from kge.bias.du.measures import DuResult, du_bias, group_bias, pair_individual_bias, transe_individual_bias
from kge.bias.du.psi import PSIS, psi, psi_grads, resolve_psi
from kge.bias.du.stepwise import STOPS, RemovalTrial, TargetResult, debias_to_target, plan_k, remove_in_steps

__all__ = [
    "MEASURES", "DuGroupBias", "DuIndividualBias", "DuIndividualVanilla",
    "DebiasResult", "TrainFn", "ValidationResult", "add_dummy_entities", "debias_by_adding", "debias_by_removing",
    "remove_triples", "retrain_fn", "validate_influence", "with_train_triples",
    "HESSIANS", "MEASURE_GROUP", "MEASURE_INDIVIDUAL", "MEASURE_INDIVIDUAL_VANILLA", "SCALES", "DuGroups",
    "build_groups", "hessian_diagonal", "train_triples",
    "InfluenceResult", "TripleGradients", "influence_all", "triple_influence",
    "DuResult", "du_bias", "group_bias", "pair_individual_bias", "transe_individual_bias",
    "PSIS", "psi", "psi_grads", "resolve_psi",
    "STOPS", "RemovalTrial", "TargetResult", "debias_to_target", "plan_k", "remove_in_steps",
]
