"""Du et al.: influence-guided removal that stops at the target (kge.bias.du.stepwise).

Known answers: the step planner on hand-computed sums; the stopping rule in linear worlds whose
real change is ``c`` times the predicted one (calibration, backing off an overshoot, stopping on
noise); and on the tiny kge graph a model whose ``B_gr`` after "retraining" is known in closed form
from the removed triples. Then a real retraining run on the tiny graph, and the CLI.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from kge.bias import du
from kge.models.base import KGEModel
from support.hardening import kge_fixture, make_graph


def test_plan_k_known_values():
    # cumulative 0.8, 1.4, 1.8 against 1.0: k = 1 misses by 0.2, k = 2 by 0.4
    assert du.plan_k(np.array([0.8, 0.6, 0.4]), 1.0, 1.0) == 1
    # calibrated by 0.25: 0.2, 0.35, 0.45 against 0.34 -> misses 0.14, 0.01, 0.11 -> k = 2
    assert du.plan_k(np.array([0.8, 0.6, 0.4]), 0.34, 0.25) == 2
    assert du.plan_k(np.array([1.0, 1.0]), 1.5, 1.0) == 1   # tie: the smaller step
    assert du.plan_k(np.array([0.1, 0.1, 0.1]), 5.0, 1.0) == 3  # not reachable: everything
    with pytest.raises(ValueError, match="no candidate"):
        du.plan_k(np.array([]), 1.0, 1.0)
    with pytest.raises(ValueError, match="must be > 0"):
        du.plan_k(np.array([1.0]), -1.0, 1.0)


def _linear_world(deltas, c, b0):
    """Rows with predicted changes ``deltas``; retraining moves the bias by ``c * sum(deltas)``
    of the removed rows (the influence function is off by the factor ``c``)."""
    deltas = np.asarray(deltas, dtype=np.float64)

    def estimate(keep, state):
        rows = np.flatnonzero(keep)
        return rows, deltas[rows]

    def retrain(keep):
        return "model", float(b0 + c * deltas[~keep].sum())

    return estimate, retrain


def test_calibration_stops_at_the_target_known_answer():
    # b0 = -1; trial 1 trusts the influence (ratio 1): one row (0.8) -> measured 0.2, ratio 0.25;
    # trial 2 needs 0.8 = 0.25 * 8 * 0.4: eight more rows -> bias 0 exactly
    est, ret = _linear_world([0.8] + [0.4] * 10, c=0.25, b0=-1.0)
    keep, state, bias, trials, stop, ratio = du.remove_in_steps(11, "model", -1.0, est, ret, tol=0.01)
    assert stop == "target" and bias == pytest.approx(0.0, abs=1e-12)
    assert [t.k for t in trials] == [1, 8] and all(t.accepted for t in trials)
    assert ratio == pytest.approx(0.25)
    assert np.flatnonzero(~keep).tolist() == list(range(9))
    assert [t.predicted for t in trials] == pytest.approx([0.8, 3.2])
    assert [t.measured for t in trials] == pytest.approx([0.2, 0.8])


def test_overshoot_is_backed_off_known_answer():
    # the influence UNDERestimates (c = 2): k = 3 (0.9) -> +0.8, crossed: undone, ratio 2 -> k = 2
    # (0.6) -> +0.2, crossed: undone -> k = 1 -> -0.4 (closer, same side): accepted; then k = 1
    # again -> +0.2 crosses but is closer than -0.4 and no smaller step exists: accepted; from
    # +0.2 no row moves the bias down: stop
    est, ret = _linear_world([0.3] * 10, c=2.0, b0=-1.0)
    keep, _, bias, trials, stop, ratio = du.remove_in_steps(10, "m", -1.0, est, ret, tol=0.01)
    assert [(t.k, t.outcome) for t in trials] == [(3, "overshoot"), (2, "overshoot"), (1, "closer"),
                                                  (1, "overshoot_accepted")]
    assert [t.bias_after for t in trials] == pytest.approx([0.8, 0.2, -0.4, 0.2])
    assert stop == "no_candidates" and bias == pytest.approx(0.2) and (~keep).sum() == 2
    assert ratio == pytest.approx(2.0)


def test_noise_larger_than_the_step_stops_without_removing():
    def retrain(keep):
        return "m", -1.2     # moved away from the target: the retraining noise won

    est, _ = _linear_world([0.5] * 4, c=1.0, b0=-1.0)
    keep, _, bias, trials, stop, _ = du.remove_in_steps(4, "m", -1.0, est, retrain, tol=0.01, patience=0)
    assert stop == "no_progress" and keep.all() and bias == -1.0
    assert len(trials) == 1 and not trials[0].accepted
    # patience 1 (default): retried once with twice the step, then stops
    keep, _, _, trials, stop, _ = du.remove_in_steps(4, "m", -1.0, est, retrain, tol=0.01)
    assert stop == "no_progress" and keep.all() and [(t.k, t.outcome) for t in trials] == [
        (2, "no_progress"), (4, "no_progress")]


def test_a_step_lost_in_noise_is_retried_twice_as_large_known_answer():
    deltas = np.full(4, 0.5)

    def estimate(keep, state):
        rows = np.flatnonzero(keep)
        return rows, deltas[rows]

    def retrain(keep):   # one removed triple: noise wins (-0.6); two: the real effect (c = 0.5) shows
        removed = int((~keep).sum())
        return "m", -0.6 if removed == 1 else -0.5 + 0.5 * deltas[~keep].sum()

    keep, _, bias, trials, stop, _ = du.remove_in_steps(4, "m", -0.5, estimate, retrain, tol=0.01)
    assert [(t.k, t.outcome) for t in trials] == [(1, "no_progress"), (2, "closer")]
    assert stop == "target" and bias == pytest.approx(0.0) and (~keep).sum() == 2


def test_budgets_and_bad_settings():
    est, ret = _linear_world([0.1] * 50, c=0.5, b0=-1.0)
    keep, *_, stop, _ = du.remove_in_steps(50, "m", -1.0, est, ret, max_removed=7)
    assert stop == "max_removed" and (~keep).sum() == 7
    *_, trials, stop, _ = du.remove_in_steps(50, "m", -1.0, est, ret, max_retrains=1)
    assert stop == "max_retrains" and len(trials) == 1
    keep, *_ = du.remove_in_steps(50, "m", -1.0, est, ret, max_step=3, max_retrains=1)
    assert (~keep).sum() == 3
    with pytest.raises(ValueError, match="fraction"):
        du.remove_in_steps(50, "m", -1.0, est, ret, fraction=0)
    with pytest.raises(ValueError, match="patience"):
        du.remove_in_steps(50, "m", -1.0, est, ret, patience=-1)
    with pytest.raises(ValueError, match="ratio_floor"):
        du.remove_in_steps(50, "m", -1.0, est, ret, ratio_floor=2, ratio_ceiling=1)


# ---------------------------------------------------------------------------------------------
# On the tiny kge graph
# ---------------------------------------------------------------------------------------------
class ShiftedTransE(KGEModel):
    """Squared-L2 TransE on all but the last coordinate, plus ``shift * flag`` where the last
    coordinate of an entity is its flag (1 for female persons). ``psi = -score``, so ``B_gr`` is
    the TransE part plus exactly ``shift``; the flag is detached, so gradients (and the influence)
    do not depend on ``shift``."""

    name = "shifted_transe"

    def __init__(self, ent: np.ndarray, rel: np.ndarray, shift: float):
        super().__init__(len(ent), len(rel), ent.shape[1])
        self.entity = torch.nn.Embedding.from_pretrained(torch.tensor(ent, dtype=torch.float64))
        self.relation = torch.nn.Embedding.from_pretrained(torch.tensor(rel, dtype=torch.float64))
        self.shift = shift

    def score_emb(self, h, r, t):
        d = h[..., :-1] + self.relation(r) - t[..., :-1]
        return -(d * d).sum(-1) - self.shift * h[..., -1].detach()


def _shift_world(graph, item, c, b_start, seed=0):
    """``train_fn`` on ``graph``'s subgraphs: the same embeddings, and ``shift`` such that
    ``B_gr = b_start + c * sum(delta0 of the removed rows)`` (``delta0``: the influence on the
    start model), so the real change is ``c`` times the influence function's."""
    rng = np.random.default_rng(seed)
    ent = rng.normal(size=(graph.num_entities, 4)) * 0.5
    female = graph.train[(graph.train[:, 1] == graph.relation_id("gender"))
                         & (graph.train[:, 2] == graph.entity_id("female")), 0]
    ent[:, -1] = 0.0
    ent[female, -1] = 1.0
    rel = rng.normal(size=(graph.num_relations, 3)) * 0.5
    probe = ShiftedTransE(ent, rel, 0.0)
    groups = du.build_groups(graph)
    o = graph.entity_id(item)
    s0 = b_start - du.debias._bgr_for(probe, groups, [o])[o]
    start = ShiftedTransE(ent, rel, s0)
    infl = du.triple_influence(start, graph, item, hessian="degree", damping=1.0)
    delta0 = np.zeros(len(graph.train))
    delta0[infl.triple_index] = infl.delta
    index = {tuple(t): i for i, t in enumerate(graph.train.tolist())}

    def train_fn(g):
        kept = [index[tuple(t)] for t in g.train.tolist()]
        removed = np.setdiff1d(np.arange(len(graph.train)), kept)
        return ShiftedTransE(ent, rel, s0 + c * delta0[removed].sum())

    return start, train_fn, delta0


def test_tiny_graph_known_answer():
    graph = make_graph(num_people=40)
    start, train_fn, delta0 = _shift_world(graph, "teacher", c=0.3, b_start=-0.25)
    res = du.debias_to_target(graph, start, "teacher", train_fn, tol=0.02, hessian="degree", damping=1.0,
                              max_retrains=12, progress=False)
    assert res.bias_before == pytest.approx(-0.25)
    # the identity the world is built on: B_gr after = start + c * (influence of what was removed)
    assert res.bias_after == pytest.approx(-0.25 + 0.3 * delta0[res.removed_rows].sum(), abs=1e-9)
    # top influences 0.284, 0.247, 0.188, 0.144: trial 1 (ratio 1) removes the first -> -0.165; the
    # ratio becomes 0.3 and trial 2 the next three (0.3 * 0.579 = 0.174) -> -0.011, within tol
    assert res.stop == "target" and abs(res.bias_after) <= 0.02
    assert [t.k for t in res.trials] == [1, 3] and all(t.accepted for t in res.trials)
    # trial 1 removes the start model's most influential non-gender triple (later trials re-rank
    # on the new graph's degrees)
    ok = graph.train[:, 1] != graph.relation_id("gender")
    best = int(np.flatnonzero(ok)[np.argmax(delta0[ok])])
    assert best in res.removed_rows.tolist()
    assert res.trials[0].bias_after == pytest.approx(-0.25 + 0.3 * delta0[best], abs=1e-9)
    # the calibration finds c (the influence is re-estimated on each step's graph: alpha moves a little)
    assert res.ratio == pytest.approx(0.3, rel=0.1)
    assert res.removed == len(res.removed_rows) == sum(t.k for t in res.trials if t.accepted) > 0
    gender = graph.relation_id("gender")
    assert not (graph.train[res.removed_rows, 1] == gender).any()
    # one shot at the same number of removed triples by the influence ranking of the start model
    # (what debias_by_removing does) would have used the raw, uncalibrated sum
    assert res.trials[0].ratio == 1.0 and res.trials[0].measured == pytest.approx(0.3 * res.trials[0].predicted)


def test_tiny_graph_real_retraining_bookkeeping():
    """With kge.train: the reported B_gr is the B_gr of a model retrained on the graph without
    ``removed_rows`` (same seed, deterministic), and no gender triple is removed."""
    from kge.train import TrainConfig, train

    graph = make_graph(num_people=40)
    cfg = TrainConfig(dim=8, epochs=4, batch_size=32, seed=1, evaluate_test=False, eval_every=0, num_threads=1)
    train_fn = lambda g: train(g, cfg, None, progress=False).model  # noqa: E731
    base = train_fn(graph)
    res = du.debias_to_target(graph, base, "teacher", train_fn, tol=0.02, max_retrains=3, progress=False)
    assert res.stop in du.STOPS and res.retrains == len(res.trials) <= 3
    again = train_fn(du.remove_triples(graph, res.removed_rows))
    o = graph.entity_id("teacher")
    assert du.debias._bgr_for(again, du.build_groups(graph), [o])[o] == pytest.approx(res.bias_after, abs=1e-12)
    assert not (graph.train[res.removed_rows, 1] == graph.relation_id("gender")).any()
    if res.stop == "target":
        assert abs(res.bias_after) <= 0.02
    if res.trials:
        assert res.trials[0].measured == pytest.approx(res.trials[0].bias_after - res.bias_before)
    d = res.to_dict()
    assert json.loads(json.dumps(d))["removed_rows"] == res.removed_rows.tolist()


def test_replicates_average_bias():
    graph = make_graph(num_people=40)
    start, train_fn, _ = _shift_world(graph, "teacher", c=0.3, b_start=-0.25)
    pair = lambda g: [train_fn(g), train_fn(g)]  # noqa: E731
    res = du.debias_to_target(graph, [start, start], "teacher", pair, tol=0.01, hessian="degree",
                              max_retrains=12, progress=False)
    one = du.debias_to_target(graph, start, "teacher", train_fn, tol=0.01, hessian="degree", max_retrains=12,
                              progress=False)
    assert res.config["replicates"] == 2
    assert res.removed_rows.tolist() == one.removed_rows.tolist() and res.bias_after == pytest.approx(one.bias_after)


def test_cli_to_target(tmp_path):
    from wgb.cli import cli

    fx = kge_fixture(tmp_path)
    out = tmp_path / "du.json"
    res = CliRunner().invoke(cli, ["kge", "du-debias", str(fx["emb"]), str(fx["graph"]), "--strategy", "to-target",
                                   "--occupation", "teacher", "--tol", "0.05", "--max-retrains", "2",
                                   "--epochs", "1", "--threads", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["strategy"] == "to_target" and d["stop"] in du.STOPS and d["retrains"] <= 2
    assert d["removed"] == len(d["removed_rows"]) and "teacher: B_gr" in res.output
    bad = CliRunner().invoke(cli, ["kge", "du-debias", str(fx["emb"]), str(fx["graph"]), "--strategy", "to-target",
                                   "--occupation", "teacher", "--occupation", "nurse"])
    assert bad.exit_code != 0 and "exactly one occupation" in bad.output
