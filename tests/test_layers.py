"""The import layers of the house (ARCHITECTURE.md, "Floors"): every import between our top-level
packages -- at module level or inside a function -- runs down the floors, and ``wgbstats`` (the
statistics) imports nothing of ours but ``wgbcore``. Read from the source with ``ast``, so an
import that runs only on some code path counts as much as one at the top of a file."""
from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: floor of each top-level package: imports go to a lower floor only (no sibling on its own floor)
FLOORS = {"wgbcore": 1, "wgbstats": 2, "wikigenderbias": 3, "kge": 3, "relext": 4, "wgbstudies": 5, "wgb": 6}


def imports_of(source: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) of every absolute import in ``source``, and of
    every ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name."""
    with warnings.catch_warnings():        # a file's own escape-sequence warnings are not ours to show
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(sub) for sub in ast.walk(node) if sub is not node)
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id == "__import__"))):
            names = [node.args[0].value]
        out += [(n, node.lineno, id(node) in in_function) for n in names]
    return out


def package_imports() -> list[tuple[str, str, str, int, bool]]:
    """(from package, to package, file, line, inside a function) between our top-level packages."""
    rows = []
    for pkg in FLOORS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for mod, line, fn in imports_of(path.read_text(encoding="utf-8")):
                top = mod.split(".")[0]
                if top in FLOORS and top != pkg:
                    rows.append((pkg, top, str(path.relative_to(ROOT)), line, fn))
    return rows


def test_the_scanner_sees_function_level_and_dynamic_imports():
    src = ("import wgbcore.render\n"
           "def f():\n    from relext.design import Design\n    return Design\n"
           "g = lambda: __import__('kge.bias')\n"
           "def h():\n    import importlib\n    return importlib.import_module('wgb.cli')\n")
    got = {(m, fn) for m, _, fn in imports_of(src)}
    assert {("wgbcore.render", False), ("relext.design", True), ("kge.bias", True), ("wgb.cli", True)} <= got


def test_every_import_between_packages_runs_down_the_floors():
    rows = package_imports()
    # not vacuous: the packages above do read the statistics and the plumbing
    pairs = {(a, b) for a, b, *_ in rows}
    assert {("relext", "wgbstats"), ("wgb", "wgbstats"), ("kge", "wgbstats"), ("wgbstats", "wgbcore")} <= pairs
    up = [f"{f}:{line}: {a} imports {b}{' (inside a function)' if fn else ''}"
          for a, b, f, line, fn in rows if FLOORS[b] >= FLOORS[a]]
    assert not up, "imports that run up or sideways:\n" + "\n".join(up)


def test_the_statistics_know_no_relation_extraction_or_embeddings():
    bad = [f"{f}:{line}: {b}" for a, b, f, line, _ in package_imports() if a == "wgbstats" and b != "wgbcore"]
    assert not bad, bad


@pytest.mark.parametrize("old, new, names", [
    ("relext.design", "wgbstats.design", ["Design", "Estimate", "verdicts", "DESIGN_VERSION", "estimate_from_replicates",
                                          "entity_weights", "base_metrics", "_interval"]),
    ("relext.design_verdicts", "wgbstats.verdicts", ["Claim", "holm", "power_needs", "mde_at_seeds", "_projected"]),
    ("relext.design_reference", "wgbstats.reference", ["p_value", "critical", "rejects", "tail", "GAMMA_SHARE"]),
    ("relext.design_calibration", "wgbstats.calibration", ["SCENARIOS", "simulate", "check_design_agrees"]),
    ("relext.design_counts", "wgbstats.counts", ["POPULATIONS", "_read_group"]),
])
def test_old_paths_warn_and_re_export(old, new, names):
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        mod = importlib.import_module(old)
    target = importlib.import_module(new)
    for n in names:
        assert getattr(mod, n) is getattr(target, n), n


def test_old_study_counts_keep_the_relations():
    """``relext.design.StudyCounts`` (and ``design_counts``') is relation extraction's: metrics named
    by the benchmark's relations, as before the move."""
    import importlib
    import sys

    import numpy as np

    from relext.evaluation.study_counts import StudyCounts
    from wikigenderbias.schema import RELATIONS

    for old in ("relext.design", "relext.design_counts"):
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning):
            assert importlib.import_module(old).StudyCounts is StudyCounts
    c = np.ones((2, len(RELATIONS), 3), dtype=np.int64)
    data = StudyCounts(["a", "b"], ["male", "female"], {"v": {0: c}})
    from wgbstats.design import Design

    assert "f1_gap:spouse" in Design(data, n_resamples=100).point("v", [0])


#: relext's rooms in the order the data flows (ARCHITECTURE.md, "Rooms"): a room imports lower rooms
#: only, at module level or inside a function; ``relext/__init__.py`` (the package's face) and the
#: deprecated paths are not rooms
RELEXT_ROOMS = {"model": 1, "debias": 1, "protocols": 2, "training": 3, "evaluation": 4, "extract": 5,
                "pretrained": 6}


def relext_room_imports() -> list[tuple[str, str, str, int]]:
    rows = []
    for path in sorted((ROOT / "relext").rglob("*.py")):
        parts = path.relative_to(ROOT / "relext").with_suffix("").parts
        room = parts[0]
        if room in ("__init__", "_moved", "_deprecated", "resources"):
            continue
        for mod, line, _fn in imports_of(path.read_text(encoding="utf-8")):
            if mod.startswith("relext."):
                rows.append((room, mod.split(".")[1], str(path.relative_to(ROOT)), line))
    return rows


def test_relext_rooms_import_down_the_flow():
    rows = relext_room_imports()
    assert {r[0] for r in rows} >= {"protocols", "training", "evaluation", "extract", "pretrained"}
    on_disk = {p.name.removesuffix(".py") for p in (ROOT / "relext").iterdir()
               if not p.name.startswith(("_", ".")) and p.name not in ("resources",)}
    assert on_disk == set(RELEXT_ROOMS), "a room of relext that the test does not know (or a stray file)"
    bad = [f"{f}:{line}: {a} imports {b}" for a, b, f, line in rows
           if a != b and RELEXT_ROOMS.get(b, 99) >= RELEXT_ROOMS[a]]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("old, new", [("relext.train", "relext.training.train"),
                                      ("relext.encoders.cnn", "relext.model.encoders.cnn"),
                                      ("relext.selectors", "relext.model.selectors"),
                                      ("relext.studies.claims", "wgbstudies.claims"),
                                      ("relext.grid", "wgbstudies.grid"),
                                      ("relext.score", "relext.evaluation.score")])
def test_moved_modules_are_the_same_module_under_their_old_name(old, new):
    import importlib
    import sys

    import warnings

    target = importlib.import_module(new)
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:     # an old parent package warns too
        warnings.simplefilter("always")
        mod = importlib.import_module(old)
    said = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert f"{old} moved to {new}; the old path goes in the next release" in said, said
    assert mod is target          # one module: one registry, one class per name
    assert sys.modules[new] is target and new in sys.modules


def test_the_registries_are_not_copied_under_old_paths():
    import importlib
    import sys

    for name in [m for m in sys.modules if m.startswith("relext.encoders")]:
        sys.modules.pop(name)
    with pytest.warns(DeprecationWarning):
        old = importlib.import_module("relext.encoders")
    from relext.model.encoders import ENCODERS

    assert old.ENCODERS is ENCODERS
