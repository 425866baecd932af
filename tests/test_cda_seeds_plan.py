"""scripts/study/cda_seeds_plan.py: the MDE of a claim at more seeds shrinks its seed part only."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mod():
    sys.path.insert(0, str(ROOT / "scripts" / "study"))
    try:
        import cda_seeds_plan
    finally:
        sys.path.pop(0)
    return cda_seeds_plan


def test_more_seeds_shrink_the_seed_and_interaction_parts_only():
    from relext.design_verdicts import z_total

    m = _mod()
    parts = {"seed": 4e-6, "entity": 9e-6, "interaction": 1e-6, "total": 14e-6}
    z = z_total(0.05)
    assert abs(m.mde_at(parts, 5, 5, 0.05) - z * 14e-6 ** 0.5) < 1e-12          # today's seeds: today's MDE
    assert abs(m.mde_at(parts, 5, 20, 0.05) - z * (9e-6 + 5e-6 / 4) ** 0.5) < 1e-12
    assert abs(m.mde_at(parts, 5, 10 ** 9, 0.05) - z * 9e-6 ** 0.5) < 1e-9      # the persons' floor
    assert m.mde_at(parts, 5, 20, 0.05 / 13) > m.mde_at(parts, 5, 20, 0.05)      # a stricter level, a larger MDE
