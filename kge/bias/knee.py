"""Knee / elbow detection (the Kneedle idea of Satopää et al. 2011): normalise both axes to [0, 1]
and take the point farthest from the chord joining the curve's end points, i.e. the maximum of
Kneedle's difference curve.

Not ``kneed``: its ``KneeLocator`` declares a knee only once the difference curve has dropped by
a sensitivity margin after a local maximum, so on short curves (the 5-point decade grid of the
neutral band) it often finds none, and on longer ones it may stop at an earlier local maximum;
both measures here need one knee on every curve. tests/kge/test_knee_kneed.py checks that this
knee is the maximum of kneed's difference curve on every curve the bias tests produce."""
from __future__ import annotations

import numpy as np


def knee_index(x, y) -> int:
    """Index of the knee of a monotone curve ``y(x)`` (``x`` increasing): the point of maximum
    distance from the straight line between the first and the last point, on axes normalised to
    [0, 1]. Works for convex and concave, increasing and decreasing curves alike. Returns 0 for
    curves with fewer than three points or no spread."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 3:
        return 0
    xr, yr = np.ptp(x), np.ptp(y)
    if xr == 0 or yr == 0:
        return 0
    xn = (x - x.min()) / xr
    yn = (y - y.min()) / yr
    x0, y0, x1, y1 = xn[0], yn[0], xn[-1], yn[-1]
    # distance of each point from the chord (up to a constant factor)
    dist = np.abs((y1 - y0) * xn - (x1 - x0) * yn + x1 * y0 - y1 * x0)
    return int(np.argmax(dist))


def neutral_curve(phi, ts) -> np.ndarray:
    """Number of items with ``|phi| <= t`` for each threshold ``t``."""
    a = np.abs(np.asarray(phi, dtype=float))
    return np.array([(a <= t).sum() for t in ts], dtype=np.int64)


def default_thresholds() -> np.ndarray:
    """Candidate neutral bands t: the decades 1e-5 ... 1e-1, the granularity at which Bourli reads
    her plots (she picks 1e-4, 1e-3 or 1e-2)."""
    return np.logspace(-5, -1, 5)


def fine_thresholds() -> np.ndarray:
    """A fine log grid 1e-5 ... 0.5 for plotting the neutral-count curve."""
    return np.logspace(-5, np.log10(0.5), 48)


def choose_neutral_band(phi, ts=None) -> tuple[float, np.ndarray, np.ndarray]:
    """Bourli's rule: t where the neutral-count curve starts its sharp increase. The curve of
    neutral counts against log10(t) is found at its knee. Returns ``(t, ts, counts)``."""
    ts = default_thresholds() if ts is None else np.asarray(ts, dtype=float)
    counts = neutral_curve(phi, ts)
    i = knee_index(np.log10(ts), counts)
    return float(ts[i]), ts, counts
