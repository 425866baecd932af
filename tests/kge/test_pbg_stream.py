"""The PyTorch-BigGraph path without PBG itself: streaming sources, the bucket export, the import
into a memory-mapped embedding dir, the job bookkeeping and the CLI's checks (kge.pbg_*)."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from kge import pbg
from kge.graph import GraphFormatError, load_graph, save_openke
from kge.pbg_export import (assign_partitions, bucket_path, export_job, partition_offsets, pbg_hdf5_bytes,
                            suggest_partitions)
from kge.pbg_import import import_job
from kge.pbg_run import TreeMemory, epochs_done, wait_for_export
from kge.pbg_source import from_graph, open_source
from kge.knowledge_graph import SPLITS


def _write_tsv(folder, g):
    folder.mkdir(parents=True)
    for split in SPLITS:
        (folder / f"{split}.tsv").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in g.labelled(split)))


def _write_jsonl(path, g):
    path.write_text("".join(json.dumps({"head": h, "relation": r, "tail": t}) + "\n" for h, r, t in g.labelled()))


@pytest.mark.parametrize("fmt", ["openke", "openke_gz", "graph_dir", "tsv_dir", "tsv_file", "jsonl"])
def test_sources_read_what_load_graph_reads(tmp_path, tiny_graph, fmt):
    g = tiny_graph
    if fmt.startswith("openke"):
        path = save_openke(g, tmp_path / "ok")
        if fmt == "openke_gz":
            for f in list(path.iterdir()):
                (path / (f.name + ".gz")).write_bytes(gzip.compress(f.read_bytes()))
                f.unlink()
    elif fmt == "graph_dir":
        path = g.save(tmp_path / "gd")
    elif fmt == "tsv_dir":
        _write_tsv(tmp_path / "tsv", g)
        path = tmp_path / "tsv"
    elif fmt == "tsv_file":
        path = tmp_path / "one.tsv"
        path.write_text("# comment\n\n" + "".join(f"{h}\t{r}\t{t}\n" for h, r, t in g.labelled()))
    else:
        path = tmp_path / "t.jsonl"
        _write_jsonl(path, g)
    want = load_graph(path)
    src = open_source(str(path))
    assert src.streamed == (fmt != "jsonl")
    counts = src.scan(rows=7)  # small chunks: the readers cross chunk borders many times
    assert counts == {s: len(want.split(s)) for s in SPLITS}
    assert src.entities == want.entities and src.relations == want.relations
    for split in SPLITS:
        got = np.concatenate(list(src.chunks(split, rows=5)) or [np.zeros((0, 3), np.int64)])
        np.testing.assert_array_equal(got, want.split(split))
    assert src.fingerprint(rows=6) == want.fingerprint()


def test_in_memory_source_and_fb13_names():
    src = from_graph(pbg_graph := __import__("support.hardening", fromlist=["make_graph"]).make_graph())
    src.scan(rows=4)
    assert src.fingerprint(rows=3) == pbg_graph.fingerprint()


@pytest.mark.parametrize("content, where", [
    ("3\n0 1 0\n0 x 1\n1 2 0\n", "train2id.txt:3: non-integer id"),
    ("2\n0 1 0\n0 1\n", "train2id.txt:3: expected 'head tail relation'"),
    ("2\n0 1 0\n0 99 0\n", "train2id.txt:3: id out of range"),
    ("3\n0 1 0\n1 2 0\n", "train2id.txt:1: count line says 3 but the file has 2"),
])
def test_openke_errors_name_file_and_line(tmp_path, content, where):
    (tmp_path / "entity2id.txt").write_text("3\na\t0\nb\t1\nc\t2\n")
    (tmp_path / "relation2id.txt").write_text("1\nr\t0\n")
    (tmp_path / "train2id.txt").write_text(content)
    with pytest.raises(GraphFormatError, match=where.replace("(", r"\(")):
        open_source(str(tmp_path)).scan()


def test_tsv_errors_name_file_and_line(tmp_path, tiny_graph):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tr\tb\nbroken line\n")
    with pytest.raises(GraphFormatError, match="bad.tsv:2"):
        open_source(str(bad)).scan()
    gd = tiny_graph.save(tmp_path / "gd")
    with open(gd / "triples" / "train.tsv", "a") as f:
        f.write("nobody\tgender\tmale\n")
    with pytest.raises(GraphFormatError, match=r"train.tsv:\d+: unknown entity 'nobody'"):
        open_source(str(gd)).scan()


def _cfg(g, p=3, **kw):
    return pbg.PBGConfig(model="transe", dim=8, num_partitions=p, batch_size=100, num_batch_negs=10, **kw)


def test_export_puts_every_edge_in_its_bucket_once_in_file_order(tmp_path, tiny_graph):
    g, P = tiny_graph, 3
    layout = export_job(from_graph(g), tmp_path / "job", _cfg(g, P).pbg_dict(g.relations), seed=4,
                        max_edges_per_chunk=10, rows=5)
    part = np.load(tmp_path / "job" / "partition.npy")
    np.testing.assert_array_equal(part, assign_partitions(g.num_entities, P, 4))
    assert np.ptp(np.bincount(part, minlength=P)) <= 1 and layout["partition_sizes"] == np.bincount(part).tolist()
    ids = [np.flatnonzero(part == p) for p in range(P)]  # offset -> global id
    got = []
    for lhs in range(P):
        for rhs in range(P):
            b = np.load(bucket_path(tmp_path / "job" / "edges", lhs, rhs))
            assert b.dtype == np.int32 and b.shape[1] == layout["bucket_edges"][lhs][rhs]
            tri = np.stack([ids[lhs][b[0]], b[2], ids[rhs][b[1]]], axis=1)
            want = g.train[(part[g.train[:, 0]] == lhs) & (part[g.train[:, 2]] == rhs)]
            np.testing.assert_array_equal(tri, want)  # the bucket's edges in file order
            got.append(tri)
    assert sum(map(len, got)) == len(g.train) == layout["num_edges"]
    assert layout["graph"] == g.fingerprint()
    assert layout["num_edge_chunks"] == -(-max(max(r) for r in layout["bucket_edges"]) // 10)
    for p in range(P):
        assert int((tmp_path / "job" / "entities" / f"entity_count_all_{p}.txt").read_text()) == len(ids[p])
    assert layout["bytes"] < 12 * len(g.train) + 200 * P * P  # 12 bytes an edge plus the .npy headers


def test_offsets_follow_ascending_ids():
    part = assign_partitions(50, 4, seed=1)
    off = partition_offsets(part, 4)
    for p in range(4):
        assert off[np.flatnonzero(part == p)].tolist() == list(range(int((part == p).sum())))
    assert (pbg.partition_entities(50, 4, 1) == np.stack([part, off], 1)).all()


def test_pbg_hdf5_estimate_reproduces_the_measured_blow_up():
    # the issue measured 601 MB (2 partitions) and 2.4 GB (4) for FB13: 3 x 50 MiB per bucket
    assert pbg_hdf5_bytes(np.full((2, 2), 80_000)) == 4 * 3 * 50 * 2 ** 20
    assert pbg_hdf5_bytes(np.full((4, 4), 20_000)) == 16 * 3 * 50 * 2 ** 20
    assert pbg_hdf5_bytes(np.array([[0, 7_000_000]])) == 2 * 3 * 50 * 2 ** 20  # empty: none; >6.5M edges: 2 blocks


def test_suggest_partitions():
    assert suggest_partitions(1000, 100, 10 ** 9) == 1
    p = suggest_partitions(10_000_000, 100, 2 * 10 ** 9)
    assert p >= 2 and 2 * (10_000_000 / p) * 101 * 4 <= 2 * 10 ** 9


def test_export_reuses_a_job_extends_epochs_and_drops_a_stale_one(tmp_path, tiny_graph, graph_factory):
    g, job = tiny_graph, tmp_path / "job"
    export_job(from_graph(g), job, _cfg(g, 2, epochs=3).pbg_dict(g.relations), seed=0, max_edges_per_chunk=99)
    (job / "checkpoint").mkdir()
    (job / "checkpoint" / "checkpoint_version.txt").write_text("3\n")
    mtime = os.path.getmtime(bucket_path(job / "edges", 0, 0))
    assert epochs_done(job) == 3
    # more epochs of the same graph and config: the export and the checkpoint are kept
    export_job(from_graph(g), job, _cfg(g, 2, epochs=5).pbg_dict(g.relations), seed=0, max_edges_per_chunk=99)
    assert os.path.getmtime(bucket_path(job / "edges", 0, 0)) == mtime and epochs_done(job) == 3
    assert json.loads((job / "job.json").read_text())["config"]["num_epochs"] == 5
    # another graph: the old run is stale
    g2 = graph_factory(num_people=40)
    export_job(from_graph(g2), job, _cfg(g2, 2, epochs=5).pbg_dict(g2.relations), seed=0, max_edges_per_chunk=99)
    assert not (job / "checkpoint").exists() and epochs_done(job) == 0
    # skip_if stops before writing anything
    assert export_job(from_graph(g), tmp_path / "j2", _cfg(g).pbg_dict(g.relations), seed=0, max_edges_per_chunk=9,
                      skip_if=lambda ident: True) is None
    assert not (tmp_path / "j2" / "edges").exists()


def _fake_worker_output(job, g, dim, model="transe", nan=False):
    """What kge/pbg_worker.py leaves after training: out/entities.npy in global id order etc."""
    rng = np.random.default_rng(0)
    ent = rng.normal(size=(g.num_entities, dim)).astype(np.float32)
    if nan:
        ent[3, 1] = np.nan
    names = {"transe": ["translation"], "distmult": ["diagonal"], "complex": ["real", "imag"]}[model]
    size = dim // 2 if model == "complex" else dim
    ops = {f"rhs_operators.{r}.{n}": rng.normal(size=size).astype(np.float32)
           for r in range(g.num_relations) for n in names}
    (job / "out").mkdir(parents=True, exist_ok=True)
    np.save(job / "out" / "entities.npy", ent)
    np.savez(job / "out" / "operators.npz", **ops)
    (job / "out" / "stats.json").write_text(json.dumps({"epochs": 1}))
    (job / "out" / "DONE").write_text("ok\n")
    return ent, ops


@pytest.mark.parametrize("model", sorted(pbg.PBG_MODELS))
def test_import_writes_a_memory_mapped_embedding_dir_the_measures_read(tmp_path, tiny_graph, model):
    from kge.embeddings import load_model

    g, dim, job = tiny_graph, 8, tmp_path / "job"
    ent, ops = _fake_worker_output(job, g, dim, model)
    emb = import_job(job, tmp_path / "emb", model=model, dim=dim, entities=g.entities, relations=g.relations,
                     graph_fingerprint=g.fingerprint(), graph_name=g.name, move=True, extra={"trainer": "x"})
    assert not (job / "out" / "entities.npy").exists()  # moved, not copied
    cfg = json.loads((emb / "config.json").read_text())
    assert cfg["mmap_entities"] is True and cfg["num_entities"] == g.num_entities
    mapped, dense = load_model(emb, g), load_model(emb, g, mmap=False)
    np.testing.assert_array_equal(mapped.entity.weight.detach().numpy(), ent)
    ref = pbg._build_model(pbg.PBGConfig(model=model, dim=dim), *pbg.pbg_to_ours(ent, ops, g.num_relations, model))
    t = torch.as_tensor(g.train)
    with torch.no_grad():
        for m in (mapped, dense):
            torch.testing.assert_close(m.score_hrt(t[:, 0], t[:, 1], t[:, 2]), ref.score_hrt(t[:, 0], t[:, 1], t[:, 2]))
        mapped.entity.weight.mul_(0)  # copy-on-write: the file keeps its values
    np.testing.assert_array_equal(np.load(emb / "entities.npy"), ent)
    if model == "transe":
        _measures_agree(g, emb, ["fisher", "bourli_projection"])


def _measures_agree(g, emb, names):
    """Each measure reads the mapped table exactly as it reads a loaded one."""
    from kge.bias import BiasSpec, run_measure
    from kge.embeddings import load_model

    spec = BiasSpec("gender", "male", "female", "profession")
    for name in names:
        got = run_measure(name, g, load_model(emb, g), spec).rows
        want = run_measure(name, g, load_model(emb, g, mmap=False), spec).rows
        assert got and [r.item for r in got] == [r.item for r in want], name
        np.testing.assert_allclose([r.score for r in got], [r.score for r in want], rtol=1e-5, err_msg=name)


@pytest.mark.slow
def test_every_measure_reads_the_mapped_table_as_a_loaded_one(tmp_path, tiny_graph):
    from kge.bias import MEASURES

    g, job = tiny_graph, tmp_path / "job"
    _fake_worker_output(job, g, 8)
    emb = import_job(job, tmp_path / "emb", model="transe", dim=8, entities=g.entities, relations=g.relations,
                     graph_fingerprint=g.fingerprint(), graph_name=g.name, move=False, extra={})
    from kge.bias import BiasSpec, run_measure
    from kge.embeddings import load_model

    spec = BiasSpec("gender", "male", "female", "profession")
    for name in sorted(MEASURES):
        got = run_measure(name, g, load_model(emb, g), spec).rows
        want = run_measure(name, g, load_model(emb, g, mmap=False), spec).rows
        assert [r.item for r in got] == [r.item for r in want], name
        np.testing.assert_allclose([r.score for r in got], [r.score for r in want], rtol=1e-5, err_msg=name)


def test_import_refuses_nan(tmp_path, tiny_graph):
    _fake_worker_output(tmp_path / "job", tiny_graph, 8, nan=True)
    with pytest.raises(ValueError, match="NaN"):
        import_job(tmp_path / "job", tmp_path / "emb", model="transe", dim=8, entities=tiny_graph.entities,
                   relations=tiny_graph.relations, graph_fingerprint=None, graph_name="g", move=False, extra={})


def test_wait_for_export_checks_and_times_out(tmp_path):
    with pytest.raises(TimeoutError, match="rank 0 exported no job"):
        wait_for_export(tmp_path, lambda m: None, timeout=0.2, poll=0.05)
    (tmp_path / "edges").mkdir()
    (tmp_path / "edges" / "layout.json").write_text("{}")
    (tmp_path / "job.json").write_text(json.dumps({"config": {"dimension": 8}, "seed": 0}))
    assert wait_for_export(tmp_path, lambda m: None, timeout=1)["seed"] == 0
    with pytest.raises(ValueError, match="differs"):
        wait_for_export(tmp_path, lambda m: pbg._check_job_matches(m, {"dimension": 16}, 0), timeout=1)


def test_tree_memory_sees_a_child_process():
    code = "import time; x = bytearray(60 * 2**20); x[::4096] = b'1' * len(x[::4096]); time.sleep(1.5)"
    p = subprocess.Popen([sys.executable, "-c", code])
    with TreeMemory(p.pid, interval=0.05) as mem:
        p.wait()
    if os.path.exists("/proc/self/smaps_rollup"):
        assert mem.peak_pss > 50 * 2 ** 20 and mem.max_procs >= 1


def test_distributed_set_up_errors():
    cfg = pbg.PBGConfig(num_partitions=2)
    with pytest.raises(ValueError, match="--init"):
        pbg.check_distributed(cfg, 2, 0, None)
    with pytest.raises(ValueError, match="at least 4 partitions"):
        pbg.check_distributed(cfg, 2, 1, "tcp://127.0.0.1:29500")
    with pytest.raises(ValueError, match="--rank"):
        pbg.check_distributed(cfg, 2, 2, "tcp://127.0.0.1:29500")
    pbg.check_distributed(pbg.PBGConfig(num_partitions=4), 2, 1, "tcp://10.0.0.1:29500")


@pytest.mark.parametrize("args, message", [
    (["--engine", "pbg", "--sampler", "uniform"], "--sampler belongs to our trainer"),
    (["--engine", "pbg", "--p-norm", "1"], "no L1 comparator"),
    (["--engine", "pbg", "--model", "transh"], "cannot be trained on PyTorch-BigGraph"),
    (["--engine", "pbg", "--machines", "2", "--partitions", "4"], "needs --init"),
    (["--engine", "pbg", "--machines", "2", "--partitions", "2", "--init", "tcp://127.0.0.1:2"], "at least 4"),
    (["--engine", "pbg", "--machines", "2", "--partitions", "4", "--init", "tcp://127.0.0.1:2"], "--job-dir"),
    (["--partitions", "2"], "only apply with --engine pbg"),
    (["--keep-job"], "only apply with --engine pbg"),
    (["--engine", "pbg", "--pbg-python", "/nonexistent/python"], "cannot run /nonexistent/python"),
])
def test_cli_checks_before_any_work(tmp_path, tiny_graph, args, message):
    from click.testing import CliRunner

    from wgb.cli import cli

    tiny_graph.save(tmp_path / "g")
    res = CliRunner().invoke(cli, ["kge", "train", str(tmp_path / "g"), "--out", str(tmp_path / "e"), *args])
    assert res.exit_code != 0 and message in res.output, res.output
    assert not (tmp_path / "e" / "pbg_job" / "edges").exists()


def test_pipeline_records_the_engine_only_when_it_is_pbg():
    from wgb.pipeline import PipelineConfig

    assert "kge_engine" not in PipelineConfig().record()  # run folders from before the option still match
    assert PipelineConfig(kge_engine="pbg").study_record()["kge_engine"] == "pbg"
