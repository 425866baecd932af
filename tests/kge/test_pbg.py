"""PyTorch-BigGraph export / import (kge.pbg). The round trip runs PBG with 2 partitions; it is
skipped when no interpreter can import torchbiggraph (set $WGB_PBG_PYTHON to one that can)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from kge import pbg
from kge.graph import KnowledgeGraph


def _is_nurse(i: int) -> bool:
    return (i % 3 == 0 and i % 2 == 0) or i % 7 == 0


def tiny_graph(seed: int = 0, n: int = 60) -> KnowledgeGraph:
    """Two clusters: 'likes' links entities within a cluster, plus gender/profession facts; the
    profession of every 5th person is a test fact (the classifier measures need some)."""
    rng = np.random.default_rng(seed)
    ents = [f"p{i}" for i in range(n)] + ["male", "female", "nurse", "engineer"]
    male, female, nurse, engineer = n, n + 1, n + 2, n + 3
    rels = ["likes", "gender", "profession"]
    rows, test = [], []
    for i in range(n):
        fem = i % 3 == 0
        rows.append((i, 1, female if fem else male))
        (test if i % 5 == 0 else rows).append((i, 2, nurse if _is_nurse(i) else engineer))
        for j in rng.choice(np.arange(i % 2, n, 2), size=4, replace=False):
            if j != i:
                rows.append((i, 0, int(j)))
    return KnowledgeGraph(ents, rels, np.array(rows), None, np.array(test), name="tiny")


@pytest.mark.parametrize("model", sorted(pbg.PBG_MISSING))
def test_missing_models_are_clear_errors(model):
    with pytest.raises(ValueError, match="cannot be trained on PyTorch-BigGraph"):
        pbg.PBGConfig(model=model)


def test_config_errors():
    with pytest.raises(ValueError, match="unknown PBG model"):
        pbg.PBGConfig(model="rescal")
    with pytest.raises(ValueError, match="multiple of num_batch_negs"):
        pbg.PBGConfig(batch_size=100, num_batch_negs=30)
    with pytest.raises(ValueError, match="even"):
        pbg.PBGConfig(model="complex", dim=15)


def test_partitions_are_balanced_and_bijective():
    part = pbg.partition_entities(101, 2, seed=3)
    counts = np.bincount(part[:, 0])
    assert counts.tolist() in ([51, 50], [50, 51])
    for p in range(2):
        offs = np.sort(part[part[:, 0] == p, 1])
        assert offs.tolist() == list(range(counts[p]))
    assert (pbg.partition_entities(101, 2, seed=3) == part).all()


def test_export_writes_a_job(tmp_path):
    from kge.pbg_export import bucket_path, export_job
    from kge.pbg_source import from_graph

    g = tiny_graph()
    cfg = pbg.PBGConfig(model="distmult", dim=8, num_partitions=2, batch_size=100, num_batch_negs=10)
    job = tmp_path / "job"
    export_job(from_graph(g), job, cfg.pbg_dict(g.relations), seed=0, max_edges_per_chunk=10**6)
    meta = json.loads((job / "job.json").read_text())
    assert meta["config"]["entities"] == {"all": {"num_partitions": 2}}
    assert [r["operator"] for r in meta["config"]["relations"]] == ["diagonal"] * 3
    assert meta["config"]["comparator"] == "dot" and meta["config"]["dynamic_relations"] is False
    assert np.load(job / "partition.npy").shape == (g.num_entities,)
    assert sum(np.load(bucket_path(job / "edges", lhs, rhs)).shape[1] for lhs in range(2) for rhs in range(2)) \
        == len(g.train)
    # a finished run of another config is not reused
    (job / "out").mkdir()
    (job / "out" / "DONE").write_text("ok")
    cfg2 = pbg.PBGConfig(model="transe", dim=8, batch_size=100, num_batch_negs=10)
    export_job(from_graph(g), job, cfg2.pbg_dict(g.relations), seed=0, max_edges_per_chunk=10**6)
    assert not (job / "out").exists()


def _pbg_score(model: str, u: np.ndarray, v: np.ndarray, ops: dict[str, np.ndarray]) -> np.ndarray:
    """PBG's own scoring of edges (u, r, v) with non-dynamic relations: comparator(u, op_r(v))."""
    if model == "transe":
        return -np.linalg.norm(u - (v + ops["translation"]), axis=-1)
    if model == "distmult":
        return (u * (v * ops["diagonal"])).sum(-1)
    d = u.shape[-1] // 2
    re, im = v[..., :d], v[..., d:]
    prod = np.concatenate([re * ops["real"] - im * ops["imag"], re * ops["imag"] + im * ops["real"]], -1)
    return (u * prod).sum(-1)


@pytest.mark.parametrize("model", sorted(pbg.PBG_MODELS))
def test_imported_parameters_reproduce_pbg_scores(model):
    rng = np.random.default_rng(0)
    ne, nr, dim = 30, 3, 8
    ent = rng.normal(size=(ne, dim)).astype(np.float32)
    names = {"transe": ["translation"], "distmult": ["diagonal"], "complex": ["real", "imag"]}[model]
    size = dim // 2 if model == "complex" else dim
    ops = {f"rhs_operators.{r}.{n}": rng.normal(size=size).astype(np.float32) for r in range(nr) for n in names}
    e, rel = pbg.pbg_to_ours(ent, ops, nr, model)
    ours = pbg._build_model(pbg.PBGConfig(model=model, dim=dim), e, rel)
    h, r, t = rng.integers(0, ne, 50), rng.integers(0, nr, 50), rng.integers(0, ne, 50)
    with torch.no_grad():
        got = ours.score_hrt(torch.tensor(h), torch.tensor(r), torch.tensor(t)).numpy()
    want = np.array([_pbg_score(model, ent[a], ent[c], {n: ops[f"rhs_operators.{b}.{n}"] for n in names})
                     for a, b, c in zip(h, r, t)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


needs_pbg = pytest.mark.skipif(not pbg.pbg_available(),
                               reason="torchbiggraph is not importable (install wgb[distributed] with "
                                      "setuptools<81, or set $WGB_PBG_PYTHON to a Python that has it)")


@pytest.mark.slow
@needs_pbg
def test_round_trip_two_partitions_and_bias_measures(tmp_path):
    g = tiny_graph()
    cfg = pbg.PBGConfig(model="transe", dim=16, num_partitions=2, epochs=20, lr=0.05, batch_size=100,
                        num_batch_negs=10, num_uniform_negs=10, margin=1.0)
    res = pbg.train_pbg(g, cfg, tmp_path / "emb", job_dir=tmp_path / "job", keep_job=True)
    assert (tmp_path / "job" / "checkpoint").is_dir()
    assert len(list((tmp_path / "job" / "edges").glob("bucket_*_*.npy"))) == 4  # 2 x 2 buckets
    model = res.model
    assert tuple(model.entity.weight.shape) == (g.num_entities, 16)
    # the imported model scores training triples above corrupted ones (PBG learned, we mapped right)
    tr = torch.as_tensor(g.train)
    rng = torch.Generator().manual_seed(0)
    fake = torch.randint(0, g.num_entities, (len(tr),), generator=rng)
    with torch.no_grad():
        pos = model.score_hrt(tr[:, 0], tr[:, 1], tr[:, 2])
        neg = model.score_hrt(tr[:, 0], tr[:, 1], fake)
    assert (pos > neg).float().mean() > 0.75
    # the embedding dir loads back, and the bias measures run on the PBG-trained embeddings
    from kge.bias import MEASURES, BiasSpec, run_measure
    from kge.embeddings import load_model

    loaded = load_model(tmp_path / "emb", g)
    np.testing.assert_array_equal(loaded.entity.weight.detach().numpy(), res.entities)
    spec = BiasSpec("gender", "male", "female", "profession")
    for name in sorted(MEASURES):
        out = run_measure(name, g, loaded, spec)
        assert out.rows, name
        if name.startswith("du_"):
            assert {r.item for r in out.rows} == {"nurse", "engineer"}
            assert all(np.isfinite(r.score) for r in out.rows)
