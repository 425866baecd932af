"""Withdrawn main-job reports (scripts/withdraw_wgb_run.py): gone from the repository, and what the
docs say of them is generated from results/wgb_run/withdrawn.json (the blocks themselves are
checked by tests/test_readme_generated.py)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mod():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import withdraw_wgb_run
    finally:
        sys.path.pop(0)
    return withdraw_wgb_run


def test_a_withdrawn_report_is_not_in_the_repository():
    w = _mod()
    for e in w._load(ROOT):
        left = [f for f in e["files"] if (ROOT / f).exists()]
        assert not left, (f"{e['folder']} is listed as withdrawn in {w.RECORD} but {left} exist: regenerated? "
                          "then delete its entry")
        assert e["reasons"] and set(e["reasons"]) <= set(w.REASONS)
        page = w.markdown(ROOT)
        assert e["command"] in page and e["last_commit"] in page and w.rerun_command(e) in page
        assert e["last_commit"] in w.notice(e["folder"], ROOT)


def test_the_command_that_makes_it_again():
    w = _mod()
    test = {"command": "wgb run --profile full --seeds 0,1,2 --threads 2", "protocol": "test"}
    assert w.rerun_command(test) == "wgb run --profile full --seeds 0,1,2 --threads 2 --protocol test"
    cf = {"command": "wgb run --profile full --seeds 0-4 --runs-dir results/x/runs --threads 1", "protocol": "crossfit"}
    assert w.rerun_command(cf) == "wgb run --profile full --seeds 0-4 --runs-dir RUNS --threads 1"
    assert w.notice("results/wgb_run/quick", ROOT) is None
