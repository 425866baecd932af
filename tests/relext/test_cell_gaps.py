"""The per-cell gender gaps (issue #41, parts 3 and 5): --groups parsing, cell labels from the
release's attribute table, the min-cell rule and "too few to estimate", a planted cell gap found,
the pooled estimate beside the raw one, and `wgb re score --groups` end to end."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from relext.evaluation.cell_gaps import cell_labels, cell_report, markdown, parse_groups, write_report
from relext.evaluation.study_counts import StudyCounts
from wgb.cli import cli
from wikigenderbias.groups import EraBins, attribute_table


def test_parse_groups():
    assert parse_groups("gender,era") == ["era"]
    assert parse_groups("era,gender,region") == ["era", "region"]
    with pytest.raises(ValueError, match="unknown grouping 'birthplace'"):
        parse_groups("gender,birthplace")
    with pytest.raises(ValueError, match="besides gender"):
        parse_groups("gender")


def test_cell_labels_from_the_release():
    labels, order = cell_labels(["train-00000", "train-00001"], ["era", "north_south"], eras=EraBins((1900, 1950)))
    # Princess Dorothea (1881, Vienna); Tom Wise (1948, Bournemouth)
    assert labels.tolist() == ["<1900 x North", "1900-1949 x North"]
    assert order == ["<1900 x North", "1900-1949 x North"]
    with pytest.raises(ValueError, match="person 'nobody'"):
        cell_labels(["nobody"], ["era"])


def _planted(rng, sizes, gaps, seeds=4):
    """Counts of spouse facts per person (10 each) whose recall is 0.6 + the cell's gap for men."""
    ids, gender, label, rows = [], [], [], []
    for c, ((n_m, n_f), gap) in enumerate(zip(sizes, gaps)):
        for g, n in (("male", n_m), ("female", n_f)):
            ids += [f"c{c}{g}{k}" for k in range(n)]
            gender += [g] * n
            label += [f"cell{c}"] * n
            rows.append(np.full(n, 0.6 + (gap if g == "male" else 0.0)))
    p = np.concatenate(rows)
    counts = {}
    for s in range(seeds):
        tp = rng.binomial(10, np.clip(p + rng.normal(0, 0.005), 0, 1))
        c = np.zeros((len(p), 5, 3), dtype=np.int64)
        c[:, 1, 0], c[:, 1, 2] = tp, 10 - tp
        counts[s] = c
    return StudyCounts(np.array(ids), np.array(gender), {"v": counts}), np.array(label)


def test_cell_report_min_cell_rule_planted_gap_and_pooling():
    data, label = _planted(np.random.default_rng(0), [(200, 200), (200, 200), (40, 12)], [0.15, 0.0, 0.3])
    rep = cell_report(data, label, ["cell0", "cell1", "cell2"], variant="v", grouping="toy",
                      metrics=["f1_gap:spouse"], n_resamples=300, interactions=[("cell0", "cell1"), ("cell0", "cell2")])
    pop = rep["populations"]["test"]
    rows = {r["cell"]: r for r in pop["rows"]}
    assert rows["cell0"]["verdict"] == "male > female" and rows["cell0"]["ci"][0] > 0
    assert rows["cell1"]["verdict"] == "undecided" and rows["cell1"]["mde"] > abs(rows["cell1"]["gap"])
    small = rows["cell2"]
    assert small["verdict"] == "too few to estimate" and small["gap"] is None and small["ci"] is None
    assert (small["male"], small["female"]) == (40, 12) and small["pooled"] is not None
    assert pop["judged_cells"] == ["cell0", "cell1"] and pop["n_claims"] == 2
    r = pop["ranges"][0]
    assert r["max_cell"] == "cell0" and r["driving_pair"] == ["cell0", "cell1"] and r["ci"][0] > 0
    assert pop["interactions"][0]["verdict"] == "gap larger in cell0"
    assert pop["interactions_too_few"] == [["cell0", "cell2"]]
    md = markdown(rep)
    assert "too few to estimate" in md and "partial pooling" in md and "max in cell0, min in cell1" in md


def _release_test_rows(seed: int, acc_m=0.8, acc_f=0.6):
    f = attribute_table().frame
    test = f[f["split"].isin(["male_test", "female_test"])]
    rng = np.random.default_rng(seed)
    lrng = np.random.default_rng(99)
    rows = []
    for eid, g in zip(test["entity_id"], test["gender"].astype(str)):
        label = int(lrng.integers(1, 5))
        pred = label if rng.random() < (acc_m if g == "male" else acc_f) else 0
        rows.append({"bag_id": f"{eid}-0", "entity_id": eid, "gender": g, "labels": [label], "predicted": [pred]})
    return rows


def test_cli_score_groups(tmp_path):
    files = []
    for s in range(3):
        p = tmp_path / f"run{s}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in _release_test_rows(s)))
        files.append(str(p))
    out = tmp_path / "cells"
    res = CliRunner().invoke(cli, ["re", "score", *files, "--resamples", "200", "--allow-subset",
                                   "--groups", "gender,north_south", "--groups-report", str(out)])
    assert res.exit_code == 0, res.output
    assert "## Gender gaps by north_south (model)" in res.output
    assert "| South | F1 gap spouse | 31 | 46 |" in res.output          # the release's test persons
    assert "unknown: counted, not judged" in res.output
    assert "max - min over cells: fewer than 2 cells" not in res.output
    d = json.loads((out / "cells.json").read_text())
    assert d["populations"]["test"]["sizes"]["unknown"] == {"male": 11, "female": 6}
    assert (out / "cells.png").stat().st_size > 0 and "cells.png" in (out / "cells.html").read_text()
    res = CliRunner().invoke(cli, ["re", "score", *files, "--groups", "gender,birthplace"])
    assert res.exit_code == 2 and "unknown grouping 'birthplace'" in res.output
    res = CliRunner().invoke(cli, ["re", "score", *files, "--groups", "gender,era", "--era-edges", "1900,1850"])
    assert res.exit_code == 2 and "must increase" in res.output
    res = CliRunner().invoke(cli, ["re", "score", *files, "--groups-report", str(tmp_path / "x")])
    assert res.exit_code == 2 and "needs --groups" in res.output


def test_write_report_files(tmp_path):
    data, label = _planted(np.random.default_rng(1), [(60, 60), (60, 60)], [0.0, 0.0])
    rep = cell_report(data, label, ["cell0", "cell1"], variant="v", grouping="toy", metrics=["f1_gap:spouse"],
                      n_resamples=200)
    paths = write_report(rep, tmp_path)
    assert [p.name for p in paths] == ["cells.json", "cells.md", "cells.html", "cells.png"]


def test_study_groups_of_committed_fold_runs(tmp_path):
    """re grid / re debias-grid --groups: the per-cell report of a study's finished runs (read only)."""
    from relext.evaluation.cell_gaps import study_groups

    root = Path(__file__).resolve().parents[2] / "results/re_crossfit/debias/runs"
    runs = {("none", s): [root / f"none-attention-seed{s}-fold{k}" for k in range(5)] for s in range(3)}
    paths = study_groups(runs, tmp_path, columns=["north_south"], n_resamples=200)
    assert [p.name for p in paths] == [f"cells-north_south-none.{x}" for x in ("json", "md", "html", "png")]
    rep = json.loads(paths[0].read_text())
    assert list(rep["populations"]) == ["test", "all"] and rep["registered"].startswith("exploratory")
    assert rep["populations"]["all"]["sizes"]["South"] == {"male": 512, "female": 218}


@pytest.mark.parametrize("command", [["re", "grid", "--out"], ["re", "debias-grid"]])
def test_grid_commands_check_groups_before_any_work(tmp_path, command):
    res = CliRunner().invoke(cli, [*command, str(tmp_path / "out"), "--groups", "gender,bogus", "--no-train"])
    assert res.exit_code == 2 and "unknown grouping 'bogus'" in res.output
    assert not (tmp_path / "out").exists()


def test_intervals_are_cut_to_what_an_f1_gap_can_be():
    """A t interval over few seeds can reach past [-1, 1] (a 3-seed run's cell did: [-0.79, +1.43]);
    the reported one is cut there, a max - min at [0, 2], a difference of gaps at [-2, 2]."""
    from relext.evaluation.cell_gaps import cut

    assert cut([-0.787, 1.43], -1.0, 1.0) == [-0.787, 1.0]
    assert cut([-0.2, 2.6], 0.0, 2.0) == [0.0, 2.0]
    assert cut([None, 0.5], -1.0, 1.0) == [None, 0.5]
    assert cut([-3.0, -2.5], -2.0, 2.0) == [-2.0, -2.0]
