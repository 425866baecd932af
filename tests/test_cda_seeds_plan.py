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
    """The plan's MDE is the design layer's (wgbstats.verdicts.mde_at_seeds, whatever its
    reference): at today's seeds today's MDE, larger than the normal's with 5 seeds, shrinking with
    more seeds to about the persons' floor (the normal's quantiles on the entity part alone; the
    reference may spend a little of the level on the seed part even then)."""
    from wgbstats.verdicts import mde_at_seeds, z_total

    m = _mod()
    parts = {"seed": 4e-6, "entity": 9e-6, "interaction": 1e-6, "total": 14e-6}
    assert abs(m.mde_at(parts, 5, 5, 0.05) - mde_at_seeds(parts, 5, 5, alpha_level=0.05)) < 1e-12
    assert m.mde_at(parts, 5, 5, 0.05) > z_total(0.05) * 14e-6 ** 0.5          # five seeds cost more than the normal
    assert m.mde_at(parts, 5, 10, 0.05) < m.mde_at(parts, 5, 5, 0.05)
    assert m.mde_at(parts, 5, 20, 0.05) < m.mde_at(parts, 5, 10, 0.05)          # more seeds, a smaller MDE
    floor = z_total(0.05) * 9e-6 ** 0.5
    assert floor <= m.mde_at(parts, 5, 10 ** 9, 0.05) < 1.05 * floor             # about the persons' floor
    assert m.mde_at(parts, 5, 20, 0.05 / 13) > m.mde_at(parts, 5, 20, 0.05)      # a stricter level, a larger MDE
