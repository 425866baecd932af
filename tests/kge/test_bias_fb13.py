"""Bias measures on the real FB13 graph shipped with the package (Bourli 2021, Tables 6.2-6.3)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fb13_helper import load_fb13_for_tests  # noqa: E402
from kge.bias import BiasSpec, GraphView, resolve, run_measure  # noqa: E402

# Table 6.2: persons with a profession fact in train who have value a and not b
TABLE_6_2 = [
    ("religion", "catholicism", "judaism", 753, 522),
    ("nationality", "united_states", "united_kingdom", 10213, 1621),
    ("ethnicity", "african_american", "germans", 602, 166),
]

# Table 6.3: the five most a- and b-biased occupations by equal opportunity (difference)
TABLE_6_3 = {
    "religion": ([("pope", 0.251), ("politician", 0.109), ("lawyer", 0.048), ("poet", 0.0183), ("journalist", 0.0157)],
                 [("rabbi", -0.1705), ("scientist", -0.0828), ("physicist", -0.0392), ("businessperson", -0.025),
                  ("banker", -0.0236)]),
    "nationality": ([("lawyer", 0.0902), ("actor", 0.0594), ("businessperson", 0.0389), ("singer", 0.0387),
                     ("baseball_player", 0.0267)],
                    [("engineer", -0.0484), ("writer", -0.0379), ("mathematician", -0.0338), ("physician", -0.028),
                     ("novelist", -0.0277)]),
    "ethnicity": ([("musician", 0.2697), ("singer", 0.1674), ("actor", 0.1358), ("songwriter", 0.0748),
                   ("jazz_pianist", 0.0365)],
                  [("scientist", -0.1352), ("philosopher", -0.1248), ("mathematician", -0.0887), ("banker", -0.0783),
                   ("physicist", -0.0706)]),
}


@pytest.fixture(scope="module")
def fb13():
    return GraphView.from_graph(load_fb13_for_tests())


@pytest.mark.parametrize("rel,a,b,n_a,n_b", TABLE_6_2)
def test_table_6_2_group_sizes(fb13, rel, a, b, n_a, n_b):
    g = resolve(fb13, BiasSpec(rel, a, b))
    assert (len(g.group_a), len(g.group_b)) == (n_a, n_b)


@pytest.mark.parametrize("rel,a,b,n_a,n_b", TABLE_6_2)
def test_table_6_3_most_biased_occupations(fb13, rel, a, b, n_a, n_b):
    res = run_measure("data", fb13, None, BiasSpec(rel, a, b))
    assert (res.summary["persons_a"], res.summary["persons_b"]) == (n_a, n_b)
    top_a, top_b = TABLE_6_3[rel]
    got_a = [(r.item, round(r.score, 4)) for r in res.top(5)]
    got_b = [(r.item, round(r.score, 4)) for r in res.top(5, lowest=True)]
    assert got_a == [(n, round(v, 4)) for n, v in top_a]
    assert got_b == [(n, round(v, 4)) for n, v in top_b]


def test_unknown_value_on_fb13_is_named(fb13):
    with pytest.raises(ValueError, match="'atlantis'"):
        resolve(fb13, BiasSpec("nationality", "united_states", "atlantis"))
