"""Du et al.: influence-guided removal that stops at a target ``B_gr`` (remove in steps,
re-estimate, calibrate the step).

The one-shot IF-REMOVE (:func:`kge.bias.du.debias_by_removing`) removes a fixed ``k``. The influence
function overestimates the real change of ``B_gr`` several-fold (on FB13 the summed influence of the
removed triples was 4-5x the change after retraining, ``benchmarks/results/kge_du_validation.md``),
so a ``k`` read off the predictions overshoots: journalist went from -0.07 to +1.19. Here:

1. **Estimate** ``delta_z B_gr`` on the current model and graph (the Hessian ``alpha_e`` from the
   current degrees; ``B_gr`` always over the original (person, occupation) pairs, so every step
   measures the same quantity).
2. **Plan** the step (:func:`plan_k`): the candidates are the triples whose removal moves ``B_gr``
   towards ``target`` (the sensitive relation's triples excluded), best first; ``k`` is the prefix
   whose *calibrated* predicted change ``ratio * sum(delta)`` comes closest to
   ``fraction * (target - B_gr)`` (at least 1, at most ``max_step`` and what ``max_removed`` leaves).
3. **Retrain** on the graph without them and measure ``B_gr``.
4. **Calibrate**: ``ratio`` = summed measured change / summed predicted change over every trial so
   far (clipped to ``[ratio_floor, ratio_ceiling]``); it starts at ``ratio`` (1 = trust the influence
   function; a measured slope, e.g. the leave-k-out ``actual/predicted``, starts closer).
5. **Accept or back off**: a trial is accepted when it leaves ``B_gr`` strictly closer to the target
   without crossing it by more than ``tol``. A trial that crosses it (overshoot) is undone and
   retried with a smaller ``k`` planned from the updated ratio (at most ``k - 1``); when no smaller
   ``k`` is left, the overshooting trial is accepted if it still ended closer. A trial that does not
   end closer and does not cross (retraining noise larger than the step's effect) is undone and
   retried with ``2k`` up to ``patience`` times per step; then the procedure stops (``no_progress``)
   unless an earlier trial of the step overshot but ended closer (that one is accepted).

Stops: ``target`` (``|B_gr - target| <= tol``), ``no_candidates``, ``max_removed``,
``max_retrains`` (every trial retrains once), ``no_progress``, ``overshoot`` (every ``k`` down to 1
crossed the target and none ended closer).

``train_fn(graph)`` returns a model, or a sequence of models (replicates, e.g. seeds): ``B_gr`` and
the influence are then averaged over them, which lowers the retraining noise each decision sees.
Retraining noise is the limit of any stopping rule: a removal whose real effect is smaller than
the seed-to-seed spread of ``B_gr`` cannot be told from noise; report the remaining bias on seeds
the procedure did not see (``benchmarks/kge_du_validation.py`` does).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from wgbcore.provenance import package_version

from kge.bias.du.debias import TrainFn, _bgr_for, _groups_for, remove_triples
from kge.bias.du.groups import DuGroups, _lookup, _name_list, train_triples
from kge.bias.du.influence import triple_influence
from kge.bias.du.psi import resolve_psi

STOPS = ("target", "no_candidates", "max_removed", "max_retrains", "no_progress", "overshoot")


def plan_k(gains: np.ndarray, need: float, ratio: float) -> int:
    """The step size: ``k >= 1`` minimising ``|ratio * cumsum(gains)[k-1] - need|`` (ties: the
    smaller ``k``). ``gains`` (best first) and ``need`` are in the direction of the target (> 0)."""
    gains = np.asarray(gains, dtype=np.float64)
    if not len(gains):
        raise ValueError("no candidate triples to plan a step from")
    if not (need > 0 and ratio > 0):
        raise ValueError(f"need and ratio must be > 0, got need={need}, ratio={ratio}")
    miss = np.abs(ratio * np.cumsum(gains) - need)
    return int(np.argmin(miss)) + 1   # argmin returns the first minimum: the smaller k on ties


@dataclass
class RemovalTrial:
    """One retraining: ``k`` triples removed from the state of accepted step ``step``."""

    step: int
    k: int
    ratio: float          # calibration used to plan this trial
    predicted: float      # summed influence of the k triples (current model)
    measured: float       # B_gr after retraining minus B_gr before the trial
    bias_after: float
    accepted: bool
    outcome: str          # "closer", "overshoot", "no_progress", "overshoot_accepted"


@dataclass
class TargetResult:
    """Outcome of :func:`debias_to_target`; ``removed_rows`` index the original training triples."""

    item: str
    target: float
    tol: float
    bias_before: float
    bias_after: float
    removed: int
    removed_rows: np.ndarray
    retrains: int
    stop: str
    ratio: float          # calibration at the end
    trials: list[RemovalTrial]
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=package_version)
    model: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "model"}
        d["removed_rows"] = [int(x) for x in self.removed_rows]
        d["trials"] = [dataclasses.asdict(t) for t in self.trials]
        return d


def _models(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _current_groups(groups: DuGroups, graph) -> DuGroups:
    """The original (person, occupation) pairs with the current graph's degrees (for ``alpha_e``)."""
    tr = train_triples(graph)
    n = groups.num_entities
    degree = np.bincount(tr[:, 0], minlength=n) + np.bincount(tr[:, 2], minlength=n)
    return dataclasses.replace(groups, degree=degree.astype(np.float64), num_triples=len(tr))


Estimate = Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]
Retrain = Callable[[np.ndarray], tuple[Any, float]]


def remove_in_steps(n_rows: int, state: Any, bias: float, estimate: Estimate, retrain: Retrain, *,
                    target: float = 0.0, tol: float = 0.01, ratio: float = 1.0, fraction: float = 1.0,
                    max_step: int | None = None, max_removed: int | None = None, max_retrains: int = 10,
                    ratio_floor: float = 0.02, ratio_ceiling: float = 10.0, patience: int = 1,
                    on_trial: Callable | None = None) -> tuple[np.ndarray, Any, float, list[RemovalTrial], str, float]:
    """The stopping rule (module docstring, steps 2-5) on abstract rows ``0..n_rows-1``.

    ``estimate(keep, state) -> (rows, delta)``: the candidate rows (sensitive triples already left
    out) and their predicted change of the bias, from the ``state`` (models) trained on the rows
    where ``keep`` is True; ``retrain(keep) -> (state, bias)``. Returns ``(keep, state, bias,
    trials, stop, ratio)``.
    """
    if tol < 0 or not 0 < fraction <= 1 or ratio <= 0 or max_retrains < 0 or patience < 0:
        raise ValueError(f"need tol >= 0, 0 < fraction <= 1, ratio > 0, max_retrains >= 0, patience >= 0; got "
                         f"tol={tol}, fraction={fraction}, ratio={ratio}, max_retrains={max_retrains}, "
                         f"patience={patience}")
    if not 0 < ratio_floor <= ratio_ceiling:
        raise ValueError(f"need 0 < ratio_floor <= ratio_ceiling, got {ratio_floor}, {ratio_ceiling}")
    keep = np.ones(n_rows, bool)
    trials: list[RemovalTrial] = []
    sum_pred = sum_meas = 0.0
    cur_ratio = float(ratio)
    step = 0
    while True:
        gap = target - bias
        if abs(gap) <= tol:
            return keep, state, bias, trials, "target", cur_ratio
        if len(trials) >= max_retrains:
            return keep, state, bias, trials, "max_retrains", cur_ratio
        left = n_rows if max_removed is None else max_removed - int((~keep).sum())
        if left <= 0:
            return keep, state, bias, trials, "max_removed", cur_ratio
        rows, delta = estimate(keep, state)
        gain = np.sign(gap) * np.asarray(delta, dtype=np.float64)
        order = np.argsort(-gain, kind="stable")
        order = order[gain[order] > 0]
        if not len(order):
            return keep, state, bias, trials, "no_candidates", cur_ratio
        cand, cand_gain = np.asarray(rows)[order], gain[order]
        cap = min(len(cand), max_step or len(cand), left)
        k = min(plan_k(cand_gain, fraction * abs(gap), cur_ratio), cap)
        fallback = None   # (trial, keep, state, bias) of an overshoot that still ended closer
        retries = patience
        while True:
            trial_keep = keep.copy()
            trial_keep[cand[:k]] = False
            new_state, new_bias = retrain(trial_keep)
            pred = float(np.sign(gap) * cand_gain[:k].sum())
            meas = float(new_bias - bias)
            sum_pred, sum_meas = sum_pred + pred, sum_meas + meas
            used_ratio = cur_ratio
            cur_ratio = float(np.clip(sum_meas / sum_pred, ratio_floor, ratio_ceiling))
            new_gap = target - new_bias
            closer = abs(new_gap) < abs(gap)
            crossed = bool(np.sign(new_gap) != np.sign(gap)) and abs(new_gap) > tol
            outcome = "overshoot" if crossed else ("closer" if closer else "no_progress")
            trial = RemovalTrial(step=step, k=int(k), ratio=used_ratio, predicted=pred, measured=meas,
                                 bias_after=float(new_bias), accepted=outcome == "closer", outcome=outcome)
            trials.append(trial)
            if on_trial is not None:
                on_trial(trial)
            if outcome == "closer":
                keep, state, bias = trial_keep, new_state, new_bias
                break
            if outcome == "overshoot" and closer and (fallback is None or abs(new_gap) < abs(target - fallback[3])):
                fallback = (trial, trial_keep, new_state, new_bias)
            if outcome == "no_progress" and retries > 0 and fallback is None and k < cap \
                    and len(trials) < max_retrains:
                retries -= 1
                k = min(2 * k, cap)
                continue
            smaller = min(plan_k(cand_gain, fraction * abs(gap), cur_ratio), k - 1)
            if outcome == "overshoot" and smaller >= 1 and len(trials) < max_retrains:
                k = smaller
                continue
            if fallback is not None:
                fallback[0].accepted, fallback[0].outcome = True, "overshoot_accepted"
                keep, state, bias = fallback[1], fallback[2], fallback[3]
                break
            stop = ("no_progress" if outcome == "no_progress" else
                    "overshoot" if smaller < 1 else "max_retrains")
            return keep, state, bias, trials, stop, cur_ratio
        step += 1


def debias_to_target(graph: Any, model, item: str | int, train_fn: TrainFn, *, target: float = 0.0,
                     tol: float = 0.01, ratio: float = 1.0, fraction: float = 1.0, max_step: int | None = None,
                     max_removed: int | None = None, max_retrains: int = 10, ratio_floor: float = 0.02,
                     ratio_ceiling: float = 10.0, patience: int = 1,
                     exclude_relations: Sequence[str | int] | None = None, hessian: str = "du", damping: float = 1.0, groups: DuGroups | None = None,
                     psi_kind: str = "auto", progress: bool | None = None, **names) -> TargetResult:
    """Remove influential training triples in steps until ``B_gr(item)`` is within ``tol`` of
    ``target`` (module docstring). ``model`` is ``train_fn(graph)`` (one model or replicates).
    ``names``: ``sensitive_relation``, ``a``, ``b``, ``target_relation``."""
    from tqdm.auto import tqdm

    groups = _groups_for(graph, groups, names)
    ents = groups.names["entity_names"]
    o = _lookup(ents, item, "occupation") if not isinstance(item, (int, np.integer)) else int(item)
    rels = _name_list(graph, "relation")
    excluded = [groups.sensitive_relation] if exclude_relations is None else [
        _lookup(rels, r, "relation") if not isinstance(r, (int, np.integer)) else int(r) for r in exclude_relations]
    tr = train_triples(graph)

    def bias_of(models) -> float:
        return float(np.mean([_bgr_for(m, groups, [o], psi_kind)[o] for m in models]))

    def estimate(keep, models):
        g = remove_triples(graph, np.flatnonzero(~keep))
        cur = _current_groups(groups, g)
        kept = np.flatnonzero(keep)
        total = np.zeros(len(tr))
        for m in models:
            infl = triple_influence(m, g, o, groups=cur, hessian=hessian, damping=damping, psi_kind=psi_kind)
            total[kept[infl.triple_index]] += infl.delta / len(models)
        rows = np.flatnonzero((total != 0) & ~np.isin(tr[:, 1], excluded))
        return rows, total[rows]

    def retrain(keep):
        models = _models(train_fn(remove_triples(graph, np.flatnonzero(~keep))))
        return models, bias_of(models)

    models = _models(model)
    bias0 = bias_of(models)
    with tqdm(total=max_retrains, desc=f"remove to target ({ents[o]})", unit="retrain",
              disable=None if progress is None else not progress) as bar:
        keep, models, bias, trials, stop, ratio_end = remove_in_steps(
            len(tr), models, bias0, estimate, retrain, target=target, tol=tol, ratio=ratio, fraction=fraction,
            max_step=max_step, max_removed=max_removed, max_retrains=max_retrains, ratio_floor=ratio_floor,
            ratio_ceiling=ratio_ceiling, patience=patience, on_trial=lambda t: bar.update(1))
    removed = np.flatnonzero(~keep)
    return TargetResult(item=ents[o], target=float(target), tol=float(tol), bias_before=bias0, bias_after=float(bias),
                        removed=int(len(removed)), removed_rows=removed, retrains=len(trials), stop=stop,
                        ratio=ratio_end, trials=trials,
                        config={"ratio_start": ratio, "fraction": fraction, "max_step": max_step,
                                "max_removed": max_removed, "max_retrains": max_retrains,
                                "ratio_floor": ratio_floor, "ratio_ceiling": ratio_ceiling, "patience": patience,
                                "excluded_relations": [rels[r] for r in excluded], "hessian": hessian,
                                "damping": damping, "psi": resolve_psi(models[0], psi_kind),
                                "replicates": len(models)},
                        model=models[0] if len(models) == 1 else models)
