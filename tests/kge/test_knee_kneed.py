"""Cross-check of `kge.bias.knee.knee_index` against `kneed` (Kneedle, Satopää et al. 2011).

Ours stays: the knee is the point farthest from the chord on normalised axes, which is the
maximum of Kneedle's difference curve. kneed's own detection (``KneeLocator.knee``, sensitivity
S=1) declares a knee only after the difference curve drops by S / (n - 1) past a local maximum:
on the 5-point decade grid of Bourli's neutral band it finds none ([0, 58, 259, 355, 382]) and on
an 11-point k-means SSE curve it picks a later local maximum; both measures need a knee on every
curve. The curves below are every distinct input `knee_index` gets in tests/kge/test_bias_*.py."""
import numpy as np
import pytest

from kge.bias.knee import knee_index

CURVES = [  # (x, y, our knee)
    (range(2, 13), [130.7637, 105.3817, 90.8531, 82.4296, 59.9723, 57.342, 47.7685, 43.0152, 41.1968, 40.4775,
                    39.7713], 4),
    (range(2, 13), [130.7637, 105.3817, 90.8531, 70.6897, 59.9639, 52.4726, 47.7153, 43.0224, 41.9553, 40.118,
                    39.174], 4),
    (range(2, 13), [130.7637, 105.3817, 85.2183, 70.6897, 59.9639, 52.8588, 47.7465, 42.9976, 41.1914, 39.5891,
                    38.8831], 4),
    (range(-5, 0), [0, 0, 0, 0, 1], 3),
    (range(-5, 0), [0, 0, 0, 3, 8], 2),
    (range(-5, 0), [0, 0, 0, 0, 2], 3),
    (range(-5, 0), [0, 0, 23, 177, 197], 2),
    (range(-5, 0), [0, 58, 259, 355, 382], 3),
    (range(-5, 0), [0, 0, 1, 112, 155], 2),
]


def _kneedle_difference_argmax(x, y):
    from kneed import KneeLocator

    x, y = np.asarray(x, float), np.asarray(y, float)
    direction = "increasing" if y[-1] >= y[0] else "decreasing"
    xn, yn = (x - x.min()) / np.ptp(x), (y - y.min()) / np.ptp(y)
    chord = yn[0] + (yn[-1] - yn[0]) * xn
    curve = "concave" if (yn - chord).sum() > 0 else "convex"
    kl = KneeLocator(x, y, curve=curve, direction=direction, S=1.0)
    j = int(np.argmax(kl.y_difference))
    # kneed flips x for convex-increasing and concave-decreasing curves
    return len(x) - 1 - j if (curve, direction) in (("convex", "increasing"), ("concave", "decreasing")) else j


@pytest.mark.parametrize("x, y, knee", CURVES)
def test_knee_is_the_maximum_of_kneedles_difference_curve(x, y, knee):
    pytest.importorskip("kneed", reason="kneed is not installed (optional cross-check: pip install kneed)")
    assert knee_index(list(x), y) == knee == _kneedle_difference_argmax(list(x), y)


def test_degenerate_curves():
    assert knee_index([1, 2], [3, 4]) == 0 and knee_index([1, 2, 3], [5, 5, 5]) == 0
