"""kge.bias.stability: a measure's per-item scores over embedding seeds with intervals, the
stability claim across models (known answers: a shared ranking is stable, independent ones are
not), and the embedding report's section."""
from __future__ import annotations

import numpy as np
import pytest

from kge.bias import stability as st
from kge.bias.result import BiasResult, BiasRow, BiasSpec

SPEC = BiasSpec("gender", "male", "female", "profession")
N = 400


def _results(model: str, truth: np.ndarray, rng, *, noise: float, seeds=(0, 1, 2), measure="fisher"):
    out = []
    for s in seeds:
        score = truth + rng.normal(0, noise, truth.size)
        rows = [BiasRow(measure, model, "gender", "male", "female", "profession", f"item{i}", float(v), 10, 10)
                for i, v in enumerate(score)]
        rows.append(BiasRow(measure, model, "gender", "male", "female", "profession", "*", 0.0))
        out.append(BiasResult(measure, model, SPEC, rows, seed=s))
    return out


def test_shared_ranking_is_stable_independent_rankings_are_not():
    rng = np.random.default_rng(0)
    truth = rng.normal(0, 1, N)
    stable = _results("transe", truth, rng, noise=0.05) + _results("distmult", truth, rng, noise=0.05)
    claims = st.stability_claims(stable, k=20, n_resamples=500)
    assert len(claims) == 2 and {c["towards"] for c in claims} == {"male", "female"}
    assert all(c["verdict"] == "supported" and c["agreement"] > 0.8 for c in claims)
    unstable = (_results("transe", truth, rng, noise=0.05)
                + _results("distmult", rng.normal(0, 1, N), rng, noise=0.05))
    claims = st.stability_claims(unstable, k=20, n_resamples=500)
    assert all(c["verdict"] == "contradicted" and c["ci"][1] < st.MARGIN for c in claims)


def test_item_intervals_over_seeds():
    rng = np.random.default_rng(1)
    truth = np.r_[np.full(3, 2.0), np.zeros(N - 3)]
    rs = _results("transe", truth, rng, noise=0.01)
    rows = {r["item"]: r for r in st.item_table(rs)}
    assert "*" not in rows and len(rows) == N
    big = rows["item0"]
    assert big["decided"] and big["ci"][0] < 2.0 < big["ci"][1] and len(big["seed_scores"]) == 3
    assert sum(r["decided"] for r in rows.values()) <= 5
    e = st.mean_abs_score(rs, n_resamples=300)
    assert e.ci[0] < e.value < e.ci[1] and e.n_seeds == 3


def test_a_repeated_seed_is_refused():
    rng = np.random.default_rng(2)
    rs = _results("transe", np.zeros(N), rng, noise=1.0, seeds=(0, 0, 1))
    with pytest.raises(ValueError, match="seed 0 twice"):
        st.groups(rs)


def test_the_report_shows_intervals_and_the_claims(tmp_path):
    from kge.report import render

    rng = np.random.default_rng(3)
    truth = rng.normal(0, 1, N)
    rs = _results("transe", truth, rng, noise=0.05) + _results("distmult", truth, rng, noise=0.05)
    paths = render(rs, tmp_path / "report", top=10)
    md = paths["markdown"].read_text()
    assert "Over embedding seeds and models" in md and "Top 10 towards female, with uncertainty" in md
    assert "95% CI over seeds" in md and "Are the top-10 items stable across embedding models?" in md
    assert "supported" in md
    # one seed per model: no seeds section
    paths = render(rs[:1], tmp_path / "one", top=10)
    assert "Over embedding seeds" not in paths["markdown"].read_text()
