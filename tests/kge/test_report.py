"""kge.report: markdown + HTML + PNG for every kind of result."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bias_fixtures import planted_graph, planted_model  # noqa: E402
from kge.bias import BiasSpec, run_measure  # noqa: E402
from kge.report import render  # noqa: E402

NAMES = ["data", "fisher", "bourli_projection", "bourli_topk", "bourli_debias", "keidar_tlb"]


@pytest.fixture(scope="module")
def results():
    g = planted_graph(n=300, occupations=6)
    m = planted_model("transe", g)
    spec = BiasSpec("gender", "male", "female")
    return [run_measure(n, g, None if n == "data" else m, spec) for n in NAMES]


def test_render_writes_tables_plots_and_done(results, tmp_path):
    paths = render(results, tmp_path / "rep", top=3)
    md = paths["markdown"].read_text()
    for n in NAMES:
        assert f"{n} ·" in md
    assert md.count("Top 3 towards male") == 4  # the per-item measures
    assert "neutral" in md and "Hits@10" in md.replace("hits@10", "Hits@10")
    html = paths["html"].read_text()
    assert html.count("<table>") >= len(NAMES) and "<img" in html
    pngs = list((tmp_path / "rep" / "plots").glob("*.png"))
    assert len(pngs) >= 5 and all(p.stat().st_size > 1000 for p in pngs)
    assert (tmp_path / "rep" / "DONE").exists()


def test_min_count_filters_rare_items(results, tmp_path):
    md = render(results[1:2], tmp_path / "r2", top=50, min_count=10**6)["markdown"].read_text()
    assert "(no rows)" in md
