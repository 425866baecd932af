"""Pre-registration of a study: ``plan.json`` in the study folder, written before its first run.

A study (``wgb re grid``, ``wgb re debias-grid``, the none + cda seeds study) decides its claims
once, at the sample its plan fixes; looking at the verdicts as seeds accrue and stopping when
they please is what the plan rules out. :func:`study_plan` / :func:`grid_plan` build the plan from
the study's config: the claims (names and definitions), the families Holm corrects over (one per
population), the seeds of every variant or combination, the folds, the stopping rule, the design
version (:data:`wgbstats.design.DESIGN_VERSION`) and :func:`claims_sha256`, a hash of the claim
definitions serialised canonically (:func:`canonical_claims`: a claim's function is pinned by its
value on a fixed probe input, so two definitions with the same wording but other arithmetic hash
apart).

:func:`register` writes the plan when the folder has none (``"registered": "before the runs"`` when
no run of the plan has finished yet, else ``"after the runs"``: exploratory) and refuses to go on
when the folder's plan differs from the one the command would follow: a one-line error naming the
first field that differs, as run folders of another config are refused. Commit ``plan.json``
before the runs: git's order is the evidence, the file's time only a record.

**Stopping rule: a fixed sample.** Verdicts only when every planned seed of every variant has
finished (all its fold runs, under cross-fitting). Before that the study is *interim*: its
estimates are shown, its claims are "interim: not decided" (:data:`INTERIM`), never supported or
contradicted (:func:`apply_status`); no group-sequential boundary is declared, so an interim look
decides nothing. A study registered after its runs is *exploratory*, and every table that shows
its verdicts says so. The status of a look (:func:`status`, :func:`apply_status`, :func:`label_of`
and the registration words) lives in :mod:`wgbstudies.status`, re-exported here.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from wgbstudies.status import (  # noqa: F401 - the plan's status, re-exported for callers
    AFTER, BEFORE, DURING, INTERIM, PLAN_FILE, apply_status, label_of, status,
)

#: version of this file's layout
PLAN_SCHEMA = 1
#: Bootstrap replicates of the design layer (seed x entity) for the debiasing study's verdicts
#: (:func:`wgbstudies.debias.design_report`), the number its plan registers.
DESIGN_RESAMPLES = 2000
STOPPING_RULE = {
    "kind": "fixed sample",
    "decide_at": "every planned seed of every variant (combination) finished, with all its fold runs under "
                 "cross-fitting",
    "interim": f"estimates shown, every claim '{INTERIM}'; no verdict before the planned sample "
               "(no group-sequential boundary declared)",
}
#: fields that record the registration itself: never compared on resume
REGISTRATION_FIELDS = ("registered", "registered_at", "runs_finished_at_registration", "note", "history",
                       "written_by")


# --------------------------------------------------------------------------------------------
# Canonical claim definitions
# --------------------------------------------------------------------------------------------
class _ProbeVariant:
    """A variant's metrics on the probe input: every metric name gets a fixed pseudo-random value
    derived from (variant, name), so a claim's function evaluates without any data."""

    def __init__(self, variant: str):
        self.variant = variant

    def __getitem__(self, name: str) -> np.ndarray:
        out = []
        for k in range(2):
            h = hashlib.sha256(f"{self.variant}\x00{name}\x00{k}".encode()).digest()
            out.append(int.from_bytes(h[:6], "big") / 2 ** 48 - 0.5)
        return np.asarray(out)


class _Probe:
    def __getitem__(self, variant: str) -> _ProbeVariant:
        return _ProbeVariant(variant)


def _probe(fn) -> list[float] | None:
    if fn is None:
        return None
    return [round(float(x), 10) for x in np.atleast_1d(np.asarray(fn(_Probe()), dtype=float))]


def _part(p) -> dict:
    return {"name": p.name, "variants": list(p.variants), "direction": int(p.direction), "probe": _probe(p.fn)}


def canonical_claims(specs: Sequence) -> list[dict]:
    """Each :class:`wgbstudies.claims.ClaimSpec` as plain data: its name, statistic, direction,
    variants, source, the paper's name when it is narrowed, its parts and controls, and the value
    of each function on the probe input."""
    return [{"name": s.name, "statistic": s.statistic, "direction": int(s.direction), "variants": list(s.variants),
             "source": s.source, "narrows": getattr(s, "narrows", None), "probe": _probe(s.fn),
             "parts": [_part(p) for p in s.parts] if s.parts else None,
             "controls": [_part(p) for p in s.controls]} for s in specs]


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def claims_sha256(specs_or_canonical: Sequence) -> str:
    """sha256 of the canonical claim definitions (:func:`canonical_claims`)."""
    rows = list(specs_or_canonical)
    if rows and not isinstance(rows[0], dict):
        rows = canonical_claims(rows)
    return hashlib.sha256(canonical_json(rows).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------
def _plan(study: str, specs: Sequence, seeds: Mapping[str, Sequence[int]], *, folds: int | None, fold_seed: int,
          rule: str, alpha: float, n_resamples: int, bootstrap_seed: int, units: str) -> dict:
    from wgbstats.design import DESIGN_VERSION

    canon = canonical_claims(specs)
    names = [c["name"] for c in canon]
    populations = ["test"] if folds is None else ["test", "all"]
    return {
        "schema": PLAN_SCHEMA,
        "study": study,
        "design_version": DESIGN_VERSION,
        "protocol": "test" if folds is None else "crossfit",
        units: list(seeds),
        "seeds": {k: [int(s) for s in v] for k, v in seeds.items()},
        "folds": folds,
        "fold_seed": fold_seed if folds is not None else None,
        "claims": canon,
        "claims_sha256": claims_sha256(canon),
        "families": [{"population": p, "claims": names, "correction": "holm", "alpha": alpha,
                      "test": "intersection-union for claims about every member of a set"} for p in populations],
        "stopping_rule": dict(STOPPING_RULE),
        "decision_rule": rule,
        "n_resamples": n_resamples,
        "bootstrap_seed": bootstrap_seed,
    }


def study_plan(config, *, rule: str = "argmax", alpha: float = 0.05, n_resamples: int | None = None) -> dict:
    """The plan of a debiasing study (:class:`wgbstudies.debias.DebiasStudyConfig`): every
    planned variant's seeds, the claims :func:`wgbstudies.claims.claim_specs` makes of them."""
    from wgbstudies.claims import claim_specs

    grid = config.grid_config()
    return _plan("debias", claim_specs(config.variants), {v: grid.seeds_of(v) for v in config.variants},
                 folds=config.folds, fold_seed=config.fold_seed, rule=rule, alpha=alpha,
                 n_resamples=n_resamples or DESIGN_RESAMPLES, bootstrap_seed=config.bootstrap_seed, units="variants")


def grid_plan(config, *, rule: str = "argmax", alpha: float = 0.05, n_resamples: int = 2000) -> dict:
    """The plan of an encoder x selector grid (:class:`wgbstudies.grid.GridConfig`)."""
    from wgbstudies.claims import grid_claim_specs

    seeds = {f"{e}-{s}": config.seeds_of(e) for e in config.encoders for s in config.selectors}
    return _plan("grid", grid_claim_specs(sorted(seeds)), seeds, folds=config.folds, fold_seed=config.fold_seed,
                 rule=rule, alpha=alpha, n_resamples=n_resamples, bootstrap_seed=config.bootstrap_seed,
                 units="combinations")


def first_difference(old: Mapping, new: Mapping) -> str | None:
    """The first plan field (registration fields aside) whose value differs, with what differs."""
    keys = [k for k in ("schema", "study", "design_version", "claims_sha256", "protocol", "variants", "combinations",
                        "seeds", "folds", "fold_seed", "families", "stopping_rule", "decision_rule", "n_resamples",
                        "bootstrap_seed")]
    keys += sorted(k for k in set(old) | set(new) if k not in keys and k not in REGISTRATION_FIELDS and k != "claims")
    for k in keys:
        if old.get(k) != new.get(k):
            if k == "claims_sha256":
                a = {c["name"]: c for c in old.get("claims") or []}
                b = {c["name"]: c for c in new.get("claims") or []}
                changed = ([n for n in b if n not in a] + [n for n in a if n not in b]
                           + [n for n in b if n in a and a[n] != b[n]])
                return "claims" + (f" ({changed[0]!r}" + (f" and {len(changed) - 1} more" if len(changed) > 1 else "")
                                   + ")" if changed else "")
            if k == "design_version":
                return f"design_version (plan {old.get(k)}, today {new.get(k)})"
            return k
    return None


def read_plan(out: str | Path) -> dict | None:
    path = Path(out) / PLAN_FILE
    if not path.exists():
        return None
    try:
        plan = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: unreadable plan ({exc})") from None
    if not isinstance(plan, dict) or "claims_sha256" not in plan:
        raise ValueError(f"{path}: not a study plan (no claims_sha256)")
    return plan


def register(out: str | Path, plan: dict, *, runs_finished: int, n_runs: int, amend: str | None = None) -> dict:
    """The folder's plan: ``plan`` written to ``OUT/plan.json`` when there is none (registered
    before the runs when none of them has finished, else after them), the existing one when it is
    the same plan, a one-line ``ValueError`` naming the field when it differs. ``amend`` (why, in
    words) replaces a differing plan instead, keeping the old one in ``history``: the amended plan is
    registered after the runs (exploratory) when any of its runs had finished, since it was made with
    their results in view."""
    from wgbcore.atomicio import atomic_write_json

    out = Path(out)
    have = read_plan(out)
    if have is None and (out / "config.json").is_file():   # a run's folder (re train, wgb run, kge train)
        raise ValueError(f"{out}: holds a run (its config.json), not a study: a study folder keeps its runs in "
                         "OUT/runs; give a new or empty folder as OUT")
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    history = []
    if have is not None:
        was = have.get("protocol") or ("test" if have.get("folds") is None else "crossfit")
        if was != plan.get("protocol", was):   # never amended: the runs of two protocols would mix in runs/
            raise ValueError(f"{out / PLAN_FILE}: this folder holds a study under --protocol {was}; this command "
                             f"asks for --protocol {plan.get('protocol')}, and two protocols never share a folder "
                             "(not even with --amend-plan): use another OUT")
        diff = first_difference(have, plan)
        if not diff:
            return have
        if not amend:
            raise ValueError(f"{out / PLAN_FILE}: the study was registered ({have.get('registered', '?')}) with "
                             f"another plan: field {diff} differs; run it as planned, start another folder, or "
                             "amend the plan (--amend-plan WHY: registered anew, after its runs if any has finished)")
        previous = {k: have.get(k) for k in ("registered", "registered_at", "runs_finished_at_registration",
                                             "design_version", "claims_sha256", "seeds", "folds")}
        history = [*(have.get("history") or []),
                   {"at": now, "what": f"plan amended ({diff} differs): {amend}; "
                                       f"{runs_finished} of {n_runs} runs finished", "previous": previous}]
    rec = {"registered": BEFORE if runs_finished == 0 else AFTER, "registered_at": now,
           "runs_finished_at_registration": f"{runs_finished} of {n_runs}",
           **({"history": history} if history else {}), **plan}
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / PLAN_FILE, rec)
    return rec
