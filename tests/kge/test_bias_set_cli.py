"""`wgb kge bias` over several embedding dirs (issue #42): each dir's model and seed read from its
own config.json, the per-item intervals over seeds and the top-k stability claims written in one
call, and the set's problems refused in one line before anything is scored."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bias_fixtures import planted_graph, planted_model  # noqa: E402
from wgb.cli import cli  # noqa: E402

SEEDS = (3, 5, 7)  # not 0, 1, 2: the results' seeds must come from the dirs' configs


def _save(g, kg, gdir, model: str, seed: int, path: Path, **train) -> Path:
    from kge.embeddings import save_model

    m = planted_model(model, g, seed=seed)
    order = [g.entities.index(n) for n in kg.entities]
    rorder = [g.relations.index(n) for n in kg.relations]
    with torch.no_grad():
        m.entity.weight.copy_(m.entity.weight[order].clone())
        m.relation.weight.copy_(m.relation.weight[rorder].clone())
    cfg = {"model": model, "dim": 8, "epochs": 10, "lr": 0.01, "seed": seed, **train}
    return save_model(m, path, kg, extra={"seed": seed, "train_config": cfg, "graph_path": str(gdir)})


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from kge.graph import load_graph

    root = tmp_path_factory.mktemp("kgeset")
    g = planted_graph(n=500, occupations=24)
    gdir = g.write_tsv(root / "graph")
    kg = load_graph(gdir)
    runs = root / "runs"
    for model in ("transe", "distmult"):
        for s in SEEDS:
            _save(g, kg, gdir, model, s, runs / f"{model}-s{s}")
    return root, g, kg, gdir, runs


def _bias(args, out: Path):
    return CliRunner().invoke(cli, ["kge", "bias", *map(str, args), "--measure", "fisher", "--a", "male",
                                    "--b", "female", "--top-k", "5", "--min-count", "0", "--out", str(out)])


def test_a_glob_of_dirs_gives_intervals_and_claims_in_one_call(world, tmp_path):
    root, g, kg, gdir, runs = world
    out = tmp_path / "bias.json"
    r = _bias([f"{runs}/*-s*"], out)
    assert r.exit_code == 0, r.output
    results = json.loads(out.read_text())["results"]
    assert sorted((x["model"], x["seed"]) for x in results) == sorted(
        (m, s) for m in ("transe", "distmult") for s in SEEDS)
    doc = json.loads((tmp_path / "bias.stability.json").read_text())
    (group,) = doc["groups"]
    assert group["measure"] == "fisher" and set(group["models"]) == {"transe", "distmult"}
    for entry in group["models"].values():
        assert entry["seeds"] == list(SEEDS)
        items = entry["items"]
        assert len(items) == 24 and all(len(x["seed_scores"]) == 3 for x in items)
        assert all(x["ci"][0] <= x["score"] <= x["ci"][1] for x in items if not x["degenerate"])
        lo, hi = entry["mean_abs_score"]["ci"]
        assert lo <= entry["mean_abs_score"]["value"] <= hi
        assert set(entry["seed_agreement"]) == {"male", "female"}
    claims = doc["claims"]
    assert sorted(c["towards"] for c in claims) == ["female", "male"]
    assert all(c["models"] == ["distmult", "transe"] and c["k"] == 5 for c in claims)
    assert all(c["verdict"] in ("supported", "contradicted", "undecided") for c in claims)
    assert "top 5 towards male agree, distmult vs transe" in r.output
    rep = tmp_path / "report"
    r = CliRunner().invoke(cli, ["kge", "report", str(out), "--out", str(rep), "--top", "5", "--min-count", "0"])
    assert r.exit_code == 0, r.output
    md = (rep / "report.md").read_text()
    assert "Over embedding seeds and models" in md and "Are the top-5 items stable across embedding models?" in md


def test_a_list_file_gives_labels(world, tmp_path):
    root, g, kg, gdir, runs = world
    lst = tmp_path / "dirs.txt"
    lst.write_text("# two labels of one model\n" + "".join(
        f"{runs / f'transe-s{s}'} {lab}\n" for s in SEEDS for lab in ("A",)) + "".join(
        f"{runs / f'distmult-s{s}'}  B  # comment\n" for s in SEEDS))
    out = tmp_path / "b.json"
    r = _bias([f"@{lst}", gdir], out)  # the last argument, a graph folder, is GRAPH
    assert r.exit_code == 0, r.output
    assert {x["model"] for x in json.loads(out.read_text())["results"]} == {"A", "B"}
    claims = json.loads((tmp_path / "b.stability.json").read_text())["claims"]
    assert {tuple(c["models"]) for c in claims} == {("A", "B")}


def test_one_dir_takes_its_seed_from_its_config(world, tmp_path):
    root, g, kg, gdir, runs = world
    out = tmp_path / "one.json"
    r = _bias([runs / "transe-s5"], out)
    assert r.exit_code == 0, r.output
    (res,) = json.loads(out.read_text())["results"]
    assert res["seed"] == 5 and res["model"] == "transe"
    assert not (tmp_path / "one.stability.json").exists()
    r = _bias([runs / "transe-s5", "--seed", "9", "--model-label", "mine"], out)
    assert r.exit_code == 0, r.output
    (res,) = json.loads(out.read_text())["results"]
    assert res["seed"] == 9 and res["model"] == "mine"


def _other_graph(world, tmp_path):
    root, g, kg, gdir, runs = world
    from kge.graph import load_graph

    g2 = planted_graph(n=300, occupations=24, seed=1)
    gdir2 = g2.write_tsv(tmp_path / "graph2")
    return _save(g2, load_graph(gdir2), gdir2, "transe", 11, tmp_path / "other-graph")


def _no_config(world, tmp_path):
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def _no_npy(world, tmp_path):
    d = shutil.copytree(world[4] / "distmult-s3", tmp_path / "no-npy")
    (d / "entities.npy").unlink()
    return d


def _dup_seed(world, tmp_path):
    return shutil.copytree(world[4] / "transe-s3", tmp_path / "transe-again")


def _other_setting(world, tmp_path):
    root, g, kg, gdir, runs = world
    return _save(g, kg, gdir, "transe", 13, tmp_path / "transe-longer", epochs=500)


def _no_seed(world, tmp_path):
    d = shutil.copytree(world[4] / "transe-s3", tmp_path / "transe-noseed")
    cfg = json.loads((d / "config.json").read_text())
    del cfg["seed"], cfg["train_config"]["seed"]
    cfg["train_config"]["epochs"] = 10
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def _bad_list(world, tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text(f"{world[4] / 'transe-s3'} A extra\n")
    return f"@{p}"


@pytest.mark.parametrize("extra,args,message", [
    (_other_graph, [], "were trained on different graphs"),
    (_no_config, [], "empty: not an embedding dir (config.json missing)"),
    (_no_npy, [], "no-npy: no embeddings (entities.npy missing"),
    (_dup_seed, [], "transe at seed 3 twice"),
    (_other_setting, [], "both transe but trained with other train_config.epochs (10 vs 500)"),
    (_no_seed, [], "field 'seed' missing"),
    (_bad_list, [], "bad.txt:1: expected 'DIR' or 'DIR LABEL', got 3 fields"),
    (lambda w, t: str(t / "nothing-*"), [], "the pattern matches no embedding dir"),
    (None, ["--seed", "1"], "--seed and --model-label name one embedding dir"),
    (None, ["--measure", "bourli_analogy"], "give no per-item scores"),
    (None, ["--stability", "x.json"], "x.json is also --out"),
])
def test_a_bad_set_is_one_line_before_any_work(world, tmp_path, extra, args, message):
    runs = world[4]
    srcs = [runs / "transe-s3", runs / "transe-s5", runs / "distmult-s3"]
    if extra is not None:
        srcs.append(extra(world, tmp_path))
    out = tmp_path / "x.json"
    args = [str(out) if a == "x.json" else a for a in args]
    measure = [] if "--measure" in args else ["--measure", "fisher"]
    r = CliRunner().invoke(cli, ["kge", "bias", *map(str, srcs), *measure, *args, "--out", str(out)])
    assert r.exit_code != 0
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0], r.output  # one line (usage errors add a usage hint above)
    assert not out.exists() and not (tmp_path / "x.stability.json").exists()
