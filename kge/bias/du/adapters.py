"""Du et al.'s measures as components of the ``kge.bias`` registry (protocol of ``kge.bias``:
``run(view, model, spec, *, seed, model_label) -> BiasResult``)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from kge.bias.du.groups import MEASURE_GROUP, MEASURE_INDIVIDUAL, MEASURE_INDIVIDUAL_VANILLA
from kge.bias.du.measures import DuResult, du_bias
from kge.bias.result import BiasResult, BiasRow


def _to_bias_result(res: DuResult, measure: str, spec, seed: int, model_label: str, extra_summary: dict):
    rows = [BiasRow(r["measure"], model_label or r["model"], spec.sensitive_relation, spec.a, spec.b,
                    spec.target_relation, r["item"], r["score"], r["count_a"], r["count_b"])
            for r in res.rows([measure])]
    return BiasResult(measure, model_label or res.model, spec, rows, summary=extra_summary, config=res.config,
                      seed=seed)


def _check_spec(spec) -> None:
    if spec.a is None or spec.b is None:
        raise ValueError("Du et al.'s measures compare two attribute values: set both a and b "
                         f"(got a={spec.a!r}, b={spec.b!r})")


class _TwoValues:
    def check(self, view, model, spec) -> None:
        """Du et al.'s measures need both attribute values (checked before any measure runs)."""
        _check_spec(spec)


@dataclass
class DuGroupBias(_TwoValues):
    """Registered as ``du_group``: B_gr per occupation (rows with counts C_a, C_b)."""

    min_count: int = 1
    name: str = MEASURE_GROUP
    needs_model: bool = True

    def run(self, view, model, spec, *, seed: int = 0, model_label: str = ""):
        _check_spec(spec)
        t0 = time.perf_counter()
        res = du_bias(model, view, sensitive_relation=spec.sensitive_relation, a=spec.a, b=spec.b,
                      target_relation=spec.target_relation, min_count=self.min_count, individual=False)
        return _to_bias_result(res, MEASURE_GROUP, spec, seed, model_label,
                               {"items": int(len(res.items)), "pairs": int(len(res.groups.pair_person)),
                                "compute_seconds": time.perf_counter() - t0})


@dataclass
class DuIndividualBias(_TwoValues):
    """Registered as ``du_individual`` (gender-weighted average of B_in per occupation, §3.3) and
    ``du_individual_vanilla`` (``weighted=False``: plain mean)."""

    weighted: bool = True
    hessian: str = "du"
    damping: float = 1.0
    scale: str = "consistent"
    min_count: int = 1
    name: str = ""
    needs_model: bool = True

    def __post_init__(self) -> None:
        if not self.name:
            self.name = MEASURE_INDIVIDUAL if self.weighted else MEASURE_INDIVIDUAL_VANILLA

    def run(self, view, model, spec, *, seed: int = 0, model_label: str = ""):
        _check_spec(spec)
        t0 = time.perf_counter()
        res = du_bias(model, view, sensitive_relation=spec.sensitive_relation, a=spec.a, b=spec.b,
                      target_relation=spec.target_relation, hessian=self.hessian, damping=self.damping,
                      scale=self.scale, min_count=self.min_count)
        measure = MEASURE_INDIVIDUAL if self.weighted else MEASURE_INDIVIDUAL_VANILLA
        out = _to_bias_result(res, measure, spec, seed, model_label,
                              {"items": int(len(res.items)), "pairs": int(len(res.groups.pair_person)),
                               "compute_seconds": time.perf_counter() - t0})
        out.measure = self.name
        for r in out.rows:
            r.measure = self.name
        return out


@dataclass
class DuIndividualVanilla(DuIndividualBias):
    """Registered as ``du_individual_vanilla``: plain mean of B_in per occupation."""

    weighted: bool = False


#: entries for the ``kge.bias`` resolver (name -> factory)
MEASURES = {MEASURE_GROUP: DuGroupBias, MEASURE_INDIVIDUAL: DuIndividualBias,
            MEASURE_INDIVIDUAL_VANILLA: DuIndividualVanilla}
