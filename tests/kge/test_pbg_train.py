"""PyTorch-BigGraph end to end through `wgb kge train --engine pbg` (slow; skipped when no interpreter
can import torchbiggraph: set $WGB_PBG_PYTHON): resume and extend, one-worker determinism, and
2 ranks of PBG's distributed mode on loopback against one rank."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from kge import pbg
from kge.embeddings import load_model
from wgb.cli import cli

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not pbg.pbg_available(), reason="torchbiggraph is not importable (set "
                                 "$WGB_PBG_PYTHON to a Python that has it)")]
REPO = Path(__file__).resolve().parents[2]
SMALL = ["--dim", "16", "--lr", "0.05", "--batch-size", "100", "--config"]


def _graph():
    sys.path.insert(0, str(Path(__file__).parent))
    from test_pbg import tiny_graph

    return tiny_graph()


def _small_config(tmp_path) -> str:
    p = tmp_path / "pbg.json"
    p.write_text(json.dumps({"num_batch_negs": 10, "num_uniform_negs": 10}))
    return str(p)


def _summary(text: str) -> dict:
    return json.loads(text[text.index("{"):])


def _ranks_right(model, g) -> float:
    tr = torch.as_tensor(g.train)
    fake = torch.randint(0, g.num_entities, (len(tr),), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        return float((model.score_hrt(tr[:, 0], tr[:, 1], tr[:, 2]) > model.score_hrt(tr[:, 0], tr[:, 1], fake))
                     .float().mean())


def test_cli_trains_resumes_extends_and_cleans_up(tmp_path):
    g = _graph()
    g.save(tmp_path / "g")
    base = ["kge", "train", str(tmp_path / "g"), "--engine", "pbg", "--partitions", "2", "--out", str(tmp_path / "e"),
            "--job-dir", str(tmp_path / "job"), "--keep-job", "--quiet", *SMALL, _small_config(tmp_path)]
    r = CliRunner().invoke(cli, [*base, "--epochs", "2"])
    assert r.exit_code == 0, r.output
    s = _summary(r.stdout)
    assert s["layout"]["num_edges"] == len(g.train) and len(s["epoch_loss"]) == 2
    assert s["peak_memory_mb"]["training_processes_pss"] > 0
    assert (tmp_path / "job" / "checkpoint" / "checkpoint_version.txt").read_text().strip() == "2"
    first = np.load(tmp_path / "e" / "entities.npy")
    # more epochs: trains on from the kept checkpoint instead of starting over
    r = CliRunner().invoke(cli, [*base, "--epochs", "3"])
    assert r.exit_code == 0, r.output
    s = _summary(r.stdout)
    assert s["resumed_from_epoch"] == 2 and len(s["epoch_loss"]) == 3
    assert (tmp_path / "job" / "checkpoint" / "checkpoint_version.txt").read_text().strip() == "3"
    assert not np.array_equal(first, np.load(tmp_path / "e" / "entities.npy"))
    # the same command again: nothing to do
    r = CliRunner().invoke(cli, [*base, "--epochs", "3"])
    assert r.exit_code == 0 and _summary(r.stdout)["skipped"] is True, r.output
    # fewer epochs than the checkpoint holds: refused
    r = CliRunner().invoke(cli, [*base, "--epochs", "1", "--out", str(tmp_path / "e1")])
    assert r.exit_code != 0 and "already holds 3 epochs" in r.output
    # the embedding dir works with the rest of the toolkit
    r = CliRunner().invoke(cli, ["kge", "eval", str(tmp_path / "e"), str(tmp_path / "g"), "--quiet"])
    assert r.exit_code == 0, r.output
    # without --keep-job the job folder goes away
    r = CliRunner().invoke(cli, ["kge", "train", str(tmp_path / "g"), "--engine", "pbg", "--epochs", "1",
                                 "--out", str(tmp_path / "e2"), "--quiet", *SMALL, _small_config(tmp_path)])
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "e2" / "pbg_job").exists() and (tmp_path / "e2" / "entities.npy").exists()


def test_one_worker_runs_are_bit_identical(tmp_path):
    g = _graph()
    cfg = pbg.PBGConfig(model="transe", dim=16, num_partitions=2, epochs=3, lr=0.05, batch_size=100,
                        num_batch_negs=10, num_uniform_negs=10, seed=3)
    a = pbg.train_pbg(g, cfg, tmp_path / "a")
    b = pbg.train_pbg(g, cfg, tmp_path / "b")
    np.testing.assert_array_equal(a.entities, b.entities)
    np.testing.assert_array_equal(a.relations, b.relations)
    c = pbg.train_pbg(g, pbg.PBGConfig(**{**cfg.__dict__, "seed": 4}), tmp_path / "c")
    assert not np.array_equal(a.entities, c.entities)


def test_two_ranks_on_loopback_match_one_rank(tmp_path):
    g = _graph()
    g.save(tmp_path / "g")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "wgb.cli", "kge", "train", str(tmp_path / "g"), "--engine", "pbg", "--partitions", "4",
           "--epochs", "20", "--quiet", *SMALL, _small_config(tmp_path)]
    dist = ["--machines", "2", "--init", f"tcp://127.0.0.1:{port}", "--job-dir", str(tmp_path / "job")]
    env = dict(os.environ)
    procs = [subprocess.Popen([*cmd, "--out", str(tmp_path / "two"), *dist, "--rank", str(r)], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in (0, 1)]
    outs = [p.communicate(timeout=1800) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs[0][1][-2000:] + outs[1][1][-2000:]
    s0, s1 = _summary(outs[0][0]), _summary(outs[1][0])
    assert (s0["rank"], s1["rank"], s1["out_dir"]) == (0, 1, None)
    assert s0["pbg_timing"]["buckets_trained"] + s1["pbg_timing"]["buckets_trained"] == 20 * 16
    assert s1["pbg_timing"]["buckets_trained"] > 0  # rank 1 really trained buckets
    one = subprocess.run([*cmd, "--out", str(tmp_path / "one")], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert one.returncode == 0, one.stderr[-2000:]
    m2, m1 = load_model(tmp_path / "two", g), load_model(tmp_path / "one", g)
    assert m2.num_entities == m1.num_entities == g.num_entities
    q2, q1 = _ranks_right(m2, g), _ranks_right(m1, g)
    assert q1 > 0.7 and q2 > 0.7 and abs(q2 - q1) < 0.15, (q1, q2)


def test_wgb_run_with_the_pbg_engine(tmp_path):
    """`wgb run --kge-engine pbg`: the graphs' embeddings come from PBG and every stage after them
    (bias measures, report) runs on them unchanged."""
    import wikigenderbias
    from wikigenderbias.export import write_benchmark
    from wikigenderbias.schema import GENDERS

    ents = wikigenderbias.load("entities")
    rows = {}
    for split, k in {"train": 40, "validation": 10, "male_test": 8, "female_test": 8}.items():
        rows[split] = ents[split].select(range(k)).to_list()
        for r in rows[split]:
            r["gender"] = GENDERS[r["gender"]]
    bench = write_benchmark(tmp_path / "small", rows, description="subset", progress=False)
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["run", "--profile", "tiny", "--dataset", str(bench), "--out", str(out), "--quiet",
                                 "--threads", "1", "--seed", "0", "--min-count", "1", "--kge-engine", "pbg"])
    assert r.exit_code == 0, r.output
    seed = out / "seed-0"
    assert json.loads((seed / "config.json").read_text())["config"]["kge_engine"] == "pbg"
    for g in ("gold", "baseline", "cda"):
        cfg = json.loads((seed / "embeddings" / g / "config.json").read_text())
        assert cfg["trainer"] == "pytorch-biggraph" and cfg["mmap_entities"] is True
        assert (seed / "bias" / f"{g}.json").exists() or (seed / "bias" / f"{g}.json.gz").exists()
    assert (out / "report" / "report.html").exists()
