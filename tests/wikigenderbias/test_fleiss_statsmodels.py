"""Fleiss' kappa now comes from statsmodels: the same numbers as the closed form it replaced."""
import random

import pytest

from wikigenderbias.annotate import fleiss_kappa


def closed_form(ratings):  # the formula wikigenderbias.annotate computed by hand before
    n, N = len(ratings[0]), len(ratings)
    yes = [sum(r) for r in ratings]
    p_yes = sum(yes) / (N * n)
    p_e = p_yes ** 2 + (1 - p_yes) ** 2
    p_bar = sum((y * (y - 1) + (n - y) * (n - y - 1)) / (n * (n - 1)) for y in yes) / N
    return 1.0 if p_e == 1 else (p_bar - p_e) / (1 - p_e)


def test_statsmodels_kappa_equals_the_closed_form():
    rng = random.Random(0)
    for _ in range(300):
        n, N, p = rng.randint(2, 6), rng.randint(1, 25), rng.random()
        ratings = [[rng.random() < p for _ in range(n)] for _ in range(N)]
        assert fleiss_kappa(ratings) == pytest.approx(closed_form(ratings), abs=1e-12)
    assert fleiss_kappa([[True, True]] * 4) == 1.0 and fleiss_kappa([[False] * 3] * 2) == 1.0
