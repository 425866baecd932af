"""Where a study stands against its plan (``plan.json``): final, interim or exploratory.

The low-level part of pre-registration (:mod:`wgbstudies.plan` writes and compares plans):
the registration words (:data:`BEFORE`, :data:`AFTER`, :data:`DURING`), the verdict of every
claim of an interim look (:data:`INTERIM`), :func:`status` (a look's status from its plan and the
seeds done), :func:`apply_status` (a design report at an interim look: every verdict
:data:`INTERIM`) and :func:`label_of` (the label every table of the study shows). Imports nothing
of ours: the claims, their tables, the drivers and the recheck of committed tables all read it.
"""
from __future__ import annotations

from typing import Mapping, Sequence

PLAN_FILE = "plan.json"
BEFORE, AFTER = "before the runs", "after the runs"
#: a plan fixed after the first runs started but before any claim could be estimated (no variant had
#: the seeds a test needs): recorded by hand for a study whose history says so, never written by
#: :func:`wgbstudies.plan.register`; confirmatory, with its history in the plan
DURING = "during the runs, before any claim could be estimated"
#: the verdict of every claim of an interim look
INTERIM = "interim: not decided"


def status(plan: Mapping | None, seeds_done: Mapping[str, Sequence[int]]) -> dict:
    """Where a study stands against its plan: ``seeds_done`` maps each variant (combination) to
    the seeds whose runs have all finished. ``interim`` when some planned seed is missing;
    ``exploratory`` when the plan was registered after the runs (or there is none); ``label`` is
    what every table of the study shows."""
    if plan is None:
        return {"plan": None, "registered": None, "exploratory": True, "interim": False,
                "label": "exploratory (no plan.json: no plan registered before the runs)"}
    planned = {k: set(map(int, v)) for k, v in plan["seeds"].items()}
    done = {k: len(planned[k] & set(map(int, seeds_done.get(k, [])))) for k in planned}
    same = len({len(v) for v in planned.values()}) == 1
    if same:
        n = len(next(iter(planned.values())))
        k = min(done.values())
        unit = "seeds"
    else:
        n, k, unit = sum(len(v) for v in planned.values()), sum(done.values()), "variant x seed units"
    interim = any(done[x] < len(planned[x]) for x in planned)
    exploratory = plan.get("registered") not in (BEFORE, DURING)
    parts = []
    if exploratory:
        parts.append("exploratory (plan registered after the runs)")
    elif plan.get("registered") == DURING:
        parts.append(f"pre-registered {DURING} (plan.json: history)")
    if interim:
        parts.append(f"interim ({k} of {n} {unit}): not decided")
    cell = (f"interim ({k} of {n} {unit}): not decided" if interim else None)
    if cell and exploratory:
        cell += " (exploratory)"
    return {"plan": PLAN_FILE, "registered": plan.get("registered"), "registered_at": plan.get("registered_at"),
            "claims_sha256": plan.get("claims_sha256"), "design_version": plan.get("design_version"),
            "exploratory": exploratory, "interim": interim, "done": k, "planned": n, "unit": unit,
            "seeds_done": {x: done[x] for x in planned},
            "label": "; ".join(parts) if parts else "pre-registered (plan.json before the runs)",
            "cell": cell}


def apply_status(report: dict, st: dict) -> dict:
    """``report`` (a design report with ``claims``, ``half_split`` and ``populations``) with the
    look's status in ``report["plan"]``; at an interim look every claim's verdict becomes
    :data:`INTERIM` (the estimates, p-values and intervals stay) and no half is decided."""
    report["plan"] = st
    if not st.get("interim"):
        return report
    views = [report, *(report.get("populations") or {}).values()]
    for view in views:
        for c in view.get("claims", []):
            c["verdict"] = INTERIM
            c["seeds_to_decide"], c["needs"], c["articles_factor"] = None, "", None
            c["note"] = f"{st['label']}: the plan decides at {st['planned']} {st['unit']}"
        for h in view.get("half_split") or []:
            h.update(first_half=None, second_half=None, checked=False, stable=None, interim=True)
    return report


def label_of(report: Mapping) -> str | None:
    """The status label to show beside a report's claims (None: a pre-registered, complete look)."""
    st = report.get("plan")
    if not st:
        return "exploratory (no plan.json: no plan registered before the runs)"
    if st.get("exploratory") or st.get("interim") or st.get("registered") != BEFORE:
        return st["label"]
    return None
