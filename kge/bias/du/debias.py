"""Du et al.: debiasing by adding dummy entities or removing influential triples (paper §4.3),
and the leave-k-out validation of the influence approximation (§4.2), each followed by
retraining through a ``train_fn(graph) -> model``."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from wgbcore.provenance import package_version

from kge.bias.du.groups import DuGroups, _lookup, _name_list, build_groups, train_triples
from kge.bias.du.influence import InfluenceResult, triple_influence
from kge.bias.du.measures import group_bias
from kge.bias.du.psi import resolve_psi

TrainFn = Callable[[Any], Any]  # graph -> trained KGEModel


def with_train_triples(graph: Any, train: np.ndarray, entity_names: list[str] | None = None) -> Any:
    """A copy of ``graph`` with other training triples (and optionally more entities)."""
    changes: dict[str, Any] = {}
    train_attr = "train" if hasattr(graph, "train") else "train_triples"
    changes[train_attr] = np.asarray(train, dtype=np.int64)
    if entity_names is not None:
        attr = "entity_names" if hasattr(graph, "entity_names") else "entities"
        changes[attr] = list(entity_names)
    if dataclasses.is_dataclass(graph):
        return dataclasses.replace(graph, **changes)
    import copy
    new = copy.copy(graph)
    for k, val in changes.items():
        setattr(new, k, val)
    return new


def remove_triples(graph: Any, rows: np.ndarray) -> Any:
    """``graph`` without the given training rows (entities are kept, so ids stay valid)."""
    tr = train_triples(graph)
    keep = np.ones(len(tr), bool)
    keep[np.asarray(rows, dtype=np.int64)] = False
    return with_train_triples(graph, tr[keep])


def add_dummy_entities(graph: Any, items: Sequence[str | int], *, groups: DuGroups | None = None,
                       sensitive_relation: str | int = "gender", a: str | int = "male", b: str | int = "female",
                       target_relation: str | int = "profession", c: float = 0.5, cap: int = 10000
                       ) -> tuple[Any, dict[str, int]]:
    """Strategy 1: for each occupation add ``min(round(c * |A - B|), cap - 1)`` new entities, each
    with one triple to the minority value and one to the occupation. New entities get ids after the
    existing ones, so measures on the original persons stay comparable."""
    if groups is None:
        groups = build_groups(graph, sensitive_relation, a, b, target_relation)
    if c <= 0:
        raise ValueError(f"c must be > 0, got {c}")
    ents = list(groups.names["entity_names"])
    tr = train_triples(graph)
    new_rows, added = [], {}
    for item in items:
        o = _lookup(ents, item, "occupation") if not isinstance(item, (int, np.integer)) else int(item)
        sel = groups.pair_item == o
        na, nb = int(groups.pair_is_a[sel].sum()), int((~groups.pair_is_a[sel]).sum())
        n = min(int(round(c * abs(na - nb))), max(cap - 1, 0))
        minority = groups.b if na > nb else groups.a
        name = groups.names["entity_names"][o]
        for j in range(n):
            eid = len(ents)
            ents.append(f"__du_dummy__{name}__{j}")
            new_rows.append((eid, groups.sensitive_relation, minority))
            new_rows.append((eid, groups.target_relation, o))
        added[name] = n
    if new_rows:
        tr = np.concatenate([tr, np.asarray(new_rows, dtype=np.int64)])
    return with_train_triples(graph, tr, ents), added


def retrain_fn(config: Any = None, out_dir: str | None = None) -> TrainFn:
    """``graph -> model``: retraining with :func:`kge.train.train` under ``config`` (default
    ``TrainConfig()``), the retraining step of the debiasing strategies below."""
    def fn(graph):
        import tempfile
        from kge.train import TrainConfig, train  # KGE-CORE's trainer

        cfg = config if config is not None else TrainConfig()
        with tempfile.TemporaryDirectory() as tmp:
            res = train(graph, cfg, out_dir or tmp)
        return getattr(res, "model", res)
    return fn


@dataclass
class DebiasResult:
    strategy: str
    items: list[str]
    before: dict[str, float]  # B_gr per occupation before
    after: dict[str, float]  # B_gr per occupation after retraining
    changed: dict[str, int]  # triples removed / dummy entities added per occupation
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=package_version)


def _bgr_for(model, groups: DuGroups, items: Sequence[int], psi_kind: str = "auto") -> dict[int, float]:
    it, bgr, _, _ = group_bias(model, groups, psi_kind=psi_kind)
    d = dict(zip(it.tolist(), bgr.tolist()))
    return {int(o): d.get(int(o), float("nan")) for o in items}


def _groups_for(graph, groups: DuGroups | None, names: dict) -> DuGroups:
    return groups if groups is not None else build_groups(graph, **names)


def debias_by_adding(graph: Any, model, items: Sequence[str | int], train_fn: TrainFn, *,
                     c: float = 0.5, cap: int = 10000, groups: DuGroups | None = None, psi_kind: str = "auto",
                     **names) -> DebiasResult:
    """Strategy 1 followed by retraining; ``B_gr`` measured on the original persons.
    ``names``: ``sensitive_relation``, ``a``, ``b``, ``target_relation``."""
    groups = _groups_for(graph, groups, names)
    ents = groups.names["entity_names"]
    ids = [_lookup(ents, i, "occupation") if not isinstance(i, (int, np.integer)) else int(i) for i in items]
    before = _bgr_for(model, groups, ids, psi_kind)
    new_graph, added = add_dummy_entities(graph, ids, groups=groups, c=c, cap=cap)
    new_model = train_fn(new_graph)
    after = _bgr_for(new_model, groups, ids, psi_kind)
    return DebiasResult("add", [ents[o] for o in ids], {ents[o]: before[o] for o in ids},
                        {ents[o]: after[o] for o in ids}, added, {"c": c, "cap": cap})


def debias_by_removing(graph: Any, model, item: str | int, k: int, train_fn: TrainFn, *,
                       exclude_relations: Sequence[str | int] | None = None, hessian: str = "du",
                       damping: float = 1.0, groups: DuGroups | None = None, psi_kind: str = "auto",
                       random_baseline: bool = False, seed: int = 0, **names) -> DebiasResult:
    """Strategy 2 (IF-REMOVE): remove the ``k`` triples whose removal moves ``B_gr(item)`` most
    towards zero (gender triples excluded by default, so the groups stay defined), then retrain.
    ``random_baseline=True`` removes ``k`` random training triples instead (Random-REMOVE)."""
    groups = _groups_for(graph, groups, names)
    infl = triple_influence(model, graph, item, groups=groups, hessian=hessian, damping=damping,
                            psi_kind=psi_kind)
    if random_baseline:
        rows = np.random.default_rng(seed).choice(len(train_triples(graph)), size=k, replace=False)
    else:
        rows = _removal_rows(graph, groups, infl, k, exclude_relations)
    new_model = train_fn(remove_triples(graph, rows))
    after = _bgr_for(new_model, groups, [infl.item], psi_kind)[infl.item]
    name = groups.names["entity_names"][infl.item]
    return DebiasResult("random_remove" if random_baseline else "remove", [name], {name: infl.group_bias},
                        {name: after}, {name: int(len(rows))},
                        {"k": k, "hessian": hessian, "damping": damping, "seed": seed,
                         "predicted_change": infl.predicted_change(rows)})


def _removal_rows(graph, groups: DuGroups, infl: InfluenceResult, k: int,
                  exclude_relations: Sequence[str | int] | None) -> np.ndarray:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    rels = _name_list(graph, "relation")
    excl = [groups.sensitive_relation] if exclude_relations is None else [
        _lookup(rels, r, "relation") if not isinstance(r, (int, np.integer)) else int(r) for r in exclude_relations]
    tr = train_triples(graph)
    order = infl.debiasing_order()
    order = order[~np.isin(tr[order, 1], excl)]
    return order[:k]


@dataclass
class ValidationResult:
    """Predicted (summed influence) vs actual (retrained) change of ``B_gr`` per ``k``."""

    item: str
    ks: list[int]
    predicted: list[float]
    actual: list[float]
    group_bias: float
    pearson_r: float
    p_value: float
    config: dict = field(default_factory=dict)
    version: str = field(default_factory=package_version)


def validate_influence(graph: Any, model, item: str | int, ks: Sequence[int], train_fn: TrainFn, *,
                       exclude_relations: Sequence[str | int] | None = None, hessian: str = "du",
                       damping: float = 1.0, groups: DuGroups | None = None, psi_kind: str = "auto",
                       progress: bool | None = None, **names) -> ValidationResult:
    """Leave-k-out check of the influence approximation (paper §4.2): for each ``k`` remove the
    top-``k`` triples, retrain with ``train_fn`` and compare the real change of ``B_gr`` with the sum
    of the predicted ``delta_z B_gr`` (Pearson r over the ``k``). ``model`` must be
    ``train_fn(graph)`` (same seed and config), so that only the removal differs."""
    from scipy import stats
    from tqdm.auto import tqdm

    groups = _groups_for(graph, groups, names)
    infl = triple_influence(model, graph, item, groups=groups, hessian=hessian, damping=damping,
                            psi_kind=psi_kind)
    pred, act = [], []
    for k in tqdm(list(ks), desc="leave-k-out", disable=None if progress is None else not progress):
        rows = _removal_rows(graph, groups, infl, k, exclude_relations)
        pred.append(infl.predicted_change(rows))
        m = train_fn(remove_triples(graph, rows))
        act.append(_bgr_for(m, groups, [infl.item], psi_kind)[infl.item] - infl.group_bias)
    if len(ks) >= 3 and np.std(pred) > 0 and np.std(act) > 0:
        r, p = stats.pearsonr(pred, act)
    else:
        r, p = float("nan"), float("nan")
    return ValidationResult(item=groups.names["entity_names"][infl.item], ks=[int(k) for k in ks],
                            predicted=[float(x) for x in pred], actual=[float(x) for x in act],
                            group_bias=infl.group_bias, pearson_r=float(r), p_value=float(p),
                            config={"hessian": hessian, "damping": damping, "psi": resolve_psi(model, psi_kind)})
