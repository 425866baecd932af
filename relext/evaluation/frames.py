"""pandas DataFrames of the study-design layer's results: :class:`wgbstats.design.Estimate` and
:class:`wgbstats.design.Verdict` objects as rows, intervals as ``*_low`` / ``*_high`` columns
(also importable from :mod:`relext.evaluation.score`)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

__all__ = ["estimates_df", "verdicts_df"]


def _flat(d: Mapping[str, Any]) -> dict[str, Any]:
    """Intervals ``ci*: [lo, hi]`` as ``ci*_low`` / ``ci*_high`` columns; seeds as a string."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if k.startswith("ci") and isinstance(v, (list, tuple)) and len(v) == 2:
            out[f"{k}_low"], out[f"{k}_high"] = v
        elif k == "seeds" and isinstance(v, (list, tuple)):
            out[k] = ",".join(str(x) for x in v)
        elif k == "extra" and isinstance(v, dict):
            out.update({f"extra_{x}": y for x, y in v.items()})
        else:
            out[k] = v
    return out


def estimates_df(estimates, *, flags: Sequence[Mapping] | None = None):
    """A pandas DataFrame of :class:`wgbstats.design.Estimate` objects: a sequence, or a mapping
    ``name -> Estimate`` (the names become a ``name`` column); ``flags``: the list
    :func:`wgbstats.design.flags` returned for them (adds ``p_adjusted``, ``flagged``)."""
    import pandas as pd

    items = list(estimates.items()) if isinstance(estimates, Mapping) else [(None, e) for e in estimates]
    if flags is not None and len(flags) != len(items):
        raise ValueError(f"{len(flags)} flags for {len(items)} estimates")
    rows = []
    for i, (name, e) in enumerate(items):
        row = ({"name": name} if name is not None else {}) | _flat(e.to_dict())
        if flags is not None:
            row |= {k: flags[i][k] for k in ("p_adjusted", "flagged", "correction") if k in flags[i]}
        rows.append(row)
    return pd.DataFrame(rows)


def verdicts_df(verdicts):
    """A pandas DataFrame of :class:`wgbstats.design.Verdict` objects, one row per claim."""
    import pandas as pd

    return pd.DataFrame([_flat(v.to_dict()) for v in verdicts])
