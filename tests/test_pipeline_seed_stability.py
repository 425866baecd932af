"""wgb.pipeline.seed_stability: the run report's items over embedding seeds (issue #42) from
each seed's bias results per graph: intervals per item, the measures that read no embeddings left
out, the claims across graphs with 3 seeds, nothing with one seed."""
from __future__ import annotations

import numpy as np

from kge.bias.result import BiasResult, BiasRow, BiasSpec
from wgb.pipeline.seed_stability import embedding_seeds

SPEC = BiasSpec("gender", "male", "female", "hypernym")


def _result(measure: str, graph: str, seed: int, scores: np.ndarray) -> BiasResult:
    rows = [BiasRow(measure, f"transe:{graph}", "gender", "male", "female", "hypernym", f"item{i}", float(v), 3, 3)
            for i, v in enumerate(scores)]
    return BiasResult(measure, f"transe:{graph}", SPEC, rows, seed=seed)


def _bias(seeds, n=60, noise=0.05, shared=True):
    rng = np.random.default_rng(0)
    truth = {"gold": rng.normal(0, 1, n)}
    truth["baseline"] = truth["gold"] if shared else rng.normal(0, 1, n)
    return {s: {g: [_result("fisher", g, s, t + rng.normal(0, noise, n)), _result("data", g, s, t)]
                for g, t in truth.items()} for s in seeds}


def test_three_seeds_give_intervals_and_claims_across_graphs():
    es = embedding_seeds(_bias((0, 1, 2)), ["data", "fisher"], min_count=1, k=10, n_resamples=300)
    assert {(t["measure"], t["graph"]) for t in es["tables"]} == {("fisher", "gold"), ("fisher", "baseline")}
    for t in es["tables"]:
        assert t["seeds"] == [0, 1, 2] and len(t["male"]) == 5 and len(t["female"]) == 5
        assert all(x["score"] > 0 and x["ci"][0] <= x["score"] <= x["ci"][1] for x in t["male"])
        assert t["n_decided"] > 0 and t["mean_abs_score"]["ci"][0] <= t["mean_abs_score"]["value"]
    assert sorted(c["towards"] for c in es["claims"]) == ["female", "male"]
    assert all(c["graphs"] == ["baseline", "gold"] and c["verdict"] == "supported" for c in es["claims"])
    apart = embedding_seeds(_bias((0, 1, 2), shared=False), ["fisher"], min_count=1, k=10, n_resamples=300)
    assert all(c["verdict"] != "supported" for c in apart["claims"])


def test_one_seed_or_no_embedding_measure_gives_nothing():
    assert embedding_seeds(_bias((4,)), ["fisher"], min_count=1)["tables"] == []
    assert embedding_seeds(_bias((0, 1, 2)), ["data"], min_count=1)["tables"] == []
