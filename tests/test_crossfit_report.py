"""scripts/study/crossfit_report.py: the planned MDE of each claim beside the measured one."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mod():
    sys.path.insert(0, str(ROOT / "scripts" / "study"))
    try:
        import crossfit_report
    finally:
        sys.path.pop(0)
    return crossfit_report


def test_planned_and_measured_mde_side_by_side():
    m = _mod()
    plan = {"studies": {"debias": {"claims": [
        {"claim": "gap claim", "kind": "f1_gap", "mde_crossfit": {"5": 0.02}},
        {"claim": "f1 claim", "kind": "micro_f1", "mde_crossfit": {"5": 0.01}},
        {"claim": "untested", "kind": "f1_gap", "mde_crossfit": {"5": 0.03}}]}}}
    p = {"rows": [
        {"claim": "gap claim", "crossfit_all": {"n_seeds": 5, "mde": 0.008, "mde_kind": "MDE", "verdict": "undecided"}},
        {"claim": "f1 claim", "crossfit_all": {"n_seeds": 5, "mde": 0.012, "mde_kind": "MDE", "verdict": "supported"}},
        {"claim": "untested", "crossfit_all": {"n_seeds": 2, "mde": 0.001, "verdict": "undecided",
                                               "mde_kind": "entity-only MDE (lower bound)"}}]}
    pv = m.plan_vs_measured(plan, p)
    assert [(r["claim"], r["mde_planned"], r["goal_met"]) for r in pv["rows"]] == [
        ("gap claim", 0.02, True), ("f1 claim", 0.01, None)]      # no test, no row: a lower bound is no MDE
    md = m.plan_markdown(pv)
    assert "| gap claim | 5 | 0.0200 | 0.0080 | yes | undecided |" in md and "1 of 1" in md


def test_a_pair_whose_tail_is_anonymized_in_some_sentences_only_is_counted_split():
    sys.path.insert(0, str(ROOT / "scripts" / "study"))
    try:
        import anonymize_bags
    finally:
        sys.path.pop(0)
    from datasets import Dataset

    orig = {"male_test": Dataset.from_dict({"entity_id": ["a", "a", "a", "b"], "relation": [1, 1, 3, 1],
                                            "tail": ["Jane Roe", "Jane Roe", "1900", "Ann Poe"]})}
    anon = {"male_test": Dataset.from_dict({"tail": ["E2", "Jane Roe", "1900", "E2"]})}
    got = anonymize_bags.split_pairs(orig, anon)
    assert got["test"]["spouse"] == {"pairs": 2, "split": 1, "merged": 0, "replaced": 1}   # b lost its name everywhere, a not
    assert got["test"]["birthDate"] == {"pairs": 1, "split": 0, "merged": 0, "replaced": 0}
    merged = {"male_test": Dataset.from_dict({"tail": ["E2", "E2", "E2", "E2"]})}   # two pairs of article a, one bag
    both = anonymize_bags.split_pairs(orig, merged)["test"]
    assert both["birthDate"]["merged"] == 1 and both["spouse"]["merged"] == 1   # a's two pairs; b alone in its article


def test_a_claim_over_other_members_is_not_shown_beside_the_test_protocol():
    sys.path.insert(0, str(ROOT / "scripts" / "study"))
    try:
        import crossfit_report
    finally:
        sys.path.pop(0)
    claim = {"verdict": "undecided", "value": 0.01, "ci": [-0.01, 0.03], "ci_adjusted": [-0.02, 0.04],
             "ci_adjusted_level": 0.99, "ci_entity": [-0.01, 0.03], "mde": 0.02, "n_seeds": 5}
    test = {"n_persons": 523, "claims": [{**claim, "claim": "A", "statistic": "x (cnn)"},
                                         {**claim, "claim": "B", "statistic": "y (cnn, pcnn)"}]}
    cross = {"n_persons": 523, "meta": {"study": {"folds": 5}},
             "claims": [{**claim, "claim": "A", "statistic": "x (cnn)"},
                        {**claim, "claim": "B", "statistic": "y (cnn, pcnn, rnn)"}], "populations": {}}
    p = crossfit_report.protocols(test, cross)
    a, b = p["rows"]
    assert a["test_protocol"] and not b["test_protocol"] and b["test_protocol_other_members"] == "y (cnn, pcnn)"
    assert "test protocol: y (cnn, pcnn)" in crossfit_report.markdown(p)


def test_grid_plan_beside_measured_untested_claims_say_so():
    m = _mod()
    plan = {"claims": [
        {"claim": "gap (cnn-attention)", "involves_stand_ins": False, "mde_test": 0.05, "mde_all": 0.02},
        {"claim": "gap (rnn-attention)", "involves_stand_ins": True, "mde_test": 0.06, "mde_all": 0.019},
        {"claim": "Average scores a higher micro F1", "involves_stand_ins": True, "mde_test": 0.02, "mde_all": 0.007},
        {"claim": "gap (birnn-average)", "involves_stand_ins": True, "mde_test": 0.06, "mde_all": 0.02}]}
    tested = lambda mde, v: {"n_seeds": 5, "mde": mde, "mde_kind": "MDE", "verdict": v}  # noqa: E731
    lower = {"n_seeds": 1, "mde": 0.001, "mde_kind": "entity-only MDE (lower bound)", "verdict": "undecided"}
    p = {"rows": [
        {"claim": "gap (cnn-attention)", "crossfit_test": tested(0.04, "undecided"), "crossfit_all": tested(0.009, "supported")},
        {"claim": "gap (rnn-attention)", "crossfit_test": lower, "crossfit_all": lower},
        {"claim": "Average scores a higher micro F1", "crossfit_test": tested(0.03, "undecided"),
         "crossfit_all": tested(0.008, "supported")}]}
    pv = m.grid_plan_vs_measured(plan, p)
    rows = {r["claim"]: r for r in pv["rows"]}
    assert rows["gap (cnn-attention)"]["goal_met"] is True and rows["gap (cnn-attention)"]["all"]["mde_measured"] == 0.009
    rnn = rows["gap (rnn-attention)"]
    assert rnn["all"]["mde_measured"] is None and rnn["all"]["verdict"] == "not yet tested" and rnn["goal_met"] is None
    assert rows["Average scores a higher micro F1"]["goal_met"] is None     # not a gap claim: no goal
    assert pv["not_in_results"] == ["gap (birnn-average)"]
    md = m.grid_plan_markdown(pv)
    assert "| gap (rnn-attention) | yes | 1 | 0.0600 / - | 0.0190 / - | - | not yet tested |" in md
    assert "stood in for (all persons): measured at or below the plan for 0 of 1." in md and "goal: 1 of 1" in md
    assert "The other 1 rest on the very runs the plan used" in md and "(at most 55%)" in md
    assert "Planned, no runs yet: gap (birnn-average)." in md


def test_ten_seed_plan_beside_measured_says_what_is_short_or_missing():
    m = _mod()
    plan = {"claims": [
        {"population": "test", "claim": "gap (cnn-attention)", "seeds_planned": 10, "mde_planned": 0.06},
        {"population": "all", "claim": "gap (cnn-attention)", "seeds_planned": 10, "mde_planned": 0.02},
        {"population": "all", "claim": "gap (birnn-average)", "seeds_planned": 5, "mde_planned": 0.07},
        {"population": "all", "claim": "gap (rnn-average)", "seeds_planned": 5, "mde_planned": 0.08}]}
    tested = lambda n, mde, v: {"n_seeds": n, "mde": mde, "mde_kind": "MDE", "verdict": v}  # noqa: E731
    p = {"rows": [
        {"claim": "gap (cnn-attention)", "crossfit_test": tested(10, 0.05, "undecided"),
         "crossfit_all": tested(10, 0.025, "supported")},
        {"claim": "gap (birnn-average)", "crossfit_test": None,
         "crossfit_all": {"n_seeds": 2, "mde": 0.01, "mde_kind": "entity-only MDE (lower bound)"}}]}
    pv = m.seeds_plan_vs_measured(plan, p)
    got = {(r["claim"], r["population"]): r for r in pv["rows"]}
    assert got[("gap (cnn-attention)", "all")]["mde_measured"] == 0.025
    bi = got[("gap (birnn-average)", "all")]
    assert bi["mde_measured"] is None and bi["verdict"] == "not yet tested" and bi["seeds"] == 2
    assert pv["not_in_results"] == ["gap (rnn-average) (all)"]
    md = m.seeds_plan_markdown(pv)
    assert "| gap (cnn-attention) | 10 / 10 | 0.0600 / 0.0500 | 0.0200 / 0.0250 | undecided; supported |" in md
    assert "| gap (birnn-average) | 5 / 2 | - / - | 0.0700 / - | -; not yet tested |" in md
    assert "at or below the planned MDE: 1 of 2" in md and "Short of the planned seeds: 1." in md
    assert "Planned, not in the results: gap (rnn-average) (all)." in md


def test_without_predictions_the_committed_label_noise_results_are_kept(tmp_path, monkeypatch, capsys):
    # a clone has the fold runs' counts but not their predictions: rerunning the report must not
    # overwrite the committed sensitivity with an empty table
    m = _mod()
    monkeypatch.setattr(m, "label_noise_gaps", lambda *a, **k: {})
    out = tmp_path / "debias"
    out.mkdir()
    (out / "label_noise_gap.md").write_text("committed table\n")
    assert m.main(["--out", str(out), "--grid-out", str(tmp_path / "g"), "--grid-all-out", str(tmp_path / "ga"),
                   "--seeds-out", str(tmp_path / "s")]) == 0      # nothing written into the repository
    assert (out / "label_noise_gap.md").read_text() == "committed table\n"
    assert not (out / "label_noise_gap.json").exists()
    assert "label-noise sensitivity not rewritten" in capsys.readouterr().err
    assert (out / "protocols.md").exists()


def test_the_seeds_study_sits_beside_the_main_study_and_says_it_is_exploratory():
    """An interim look of a study registered after its runs: its cells say "interim (k of n seeds): not
    decided" and its status "exploratory"; the pre-registered 13-claim study beside keeps its verdicts."""
    from wgbstudies.plan import AFTER, BEFORE, apply_status, status

    m = _mod()
    c = lambda v, val: {"claim": "CDA reduces the spouse F1 gap", "verdict": v, "value": val, "ci": [-0.02, 0.01],  # noqa: E731
                        "ci_adjusted": [-0.015, -0.001], "mde": 0.0107}
    planned = {"registered": AFTER, "seeds": {"none": list(range(36)), "cda": list(range(36))}, "claims_sha256": "x"}
    seeds = {"none": list(range(7)), "cda": list(range(6))}
    dr = {"design": {"seeds": seeds, "n_resamples": 2000}, "claims": [c("undecided", -0.0129)],
          "populations": {"all": {"claims": [c("supported", -0.0084)]}}}
    apply_status(dr, status(planned, seeds))
    res = {"meta": {"study": {"folds": 5, "seeds": list(range(36))}, "runs_done": ["a"] * 65}, "design_report": dr}
    main = {"design_report": {"plan": status({"registered": BEFORE, "seeds": {"none": [0]}, "claims_sha256": "y"},
                                             {"none": [0]}),
                              "populations": {"all": {"claims": [c("undecided", -0.0089)]}}}}
    md = m.seeds_study(res, main)
    assert "none 7, cda 6 of the planned 36 (65 fold runs" in md
    assert "Status: exploratory (plan registered after the runs); interim (6 of 36 seeds): not decided." in md
    assert ("| CDA reduces the spouse F1 gap | interim (6 of 36 seeds): not decided (exploratory); -0.0129 [-0.0150, "
            "-0.0010]; 0.0107 | interim (6 of 36 seeds): not decided (exploratory); -0.0084 [-0.0150, -0.0010]; 0.0107 "
            "| undecided; -0.0089 [-0.0150, -0.0010]; 0.0107 |") in md
    assert "supported" not in md
    assert "| - |" in m.seeds_study(res, None)     # no main study here: its cell says so
