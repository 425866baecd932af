"""README's "## Configuration" section: its key tables are generated from the config classes
(never typed). Regenerate after changing a config class with

    .venv/bin/python tests/test_readme_configuration.py --write
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADING = "## Configuration\n"
NEXT = "## Errors, safety and resuming\n"

INTRO = """\
Every `--config` file (`wgb re train`, `wgb kge train`, `wgb data build`) is YAML (`.yaml`, `.yml`)
or JSON (any other name; a run's `config.json` works), read by `wgbcore.config`: unknown keys and
values of the wrong type are one-line errors naming the file and key, and options given on the
command line override the file. `--set KEY=VALUE` (repeatable) reads VALUE as JSON when it parses
(`3`, `0.5`, `true`, `null`, `[1, 2]`), else as a string. Caches: Word2Vec vectors and spaCy
results under `$WGB_CACHE` (default `~/.cache/wgb`; `wgb re train --cache-dir` for Word2Vec), the
`datasets` cache under `$HF_DATASETS_CACHE`. The tables below are generated from the config classes
(`tests/test_readme_configuration.py` checks them).
"""


def render() -> str:
    """The body of the section (after its heading)."""
    from relext.train import TrainConfig
    from wgb.pipeline.config import PROFILES
    from wgbcore.config import fields_markdown, markdown_table

    profiles = list(PROFILES)
    keys = list(PROFILES[profiles[0]])
    run = markdown_table(["key", *profiles], ([f"`{k}`", *(f"`{PROFILES[p][k]}`" for p in profiles)] for k in keys))
    train = fields_markdown(TrainConfig)
    return (f"\n{INTRO}\n`wgb run --set KEY=VALUE`: the profile's settings (`--profile tiny|quick|full`).\n\n{run}\n\n"
            "`wgb re grid --set` and `wgb re debias-grid --set`: fields of `relext.train.TrainConfig` for every\n"
            "run (also the keys of a `wgb re train --config` file; the commands' own options, such as\n"
            "`--encoder` or `--epochs`, set theirs).\n\n<details><summary>TrainConfig keys</summary>\n\n"
            f"{train}\n\n</details>\n\n")


def section_of(text: str) -> str:
    start = text.index(HEADING) + len(HEADING)
    return text[start:text.index(NEXT, start)]


def test_configuration_section_is_generated_from_the_config_classes():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.index(HEADING) < text.index(NEXT)
    assert section_of(text) == render(), "rerun: python tests/test_readme_configuration.py --write"


def test_describe_fields_types_and_defaults():
    from dataclasses import dataclass, field

    from wgbcore.config import describe_fields

    @dataclass
    class C:
        a: int
        b: str | None = None
        c: list[str] = field(default_factory=lambda: ["x"])
        d: tuple = (1, 2)

    assert describe_fields(C) == [
        {"name": "a", "type": "int", "default": "(required)"},
        {"name": "b", "type": "str | None", "default": "null"},
        {"name": "c", "type": "list[str]", "default": '["x"]'},
        {"name": "d", "type": "tuple", "default": "[1, 2]"}]
    assert [d["name"] for d in describe_fields(C, exclude=["a", "d"])] == ["b", "c"]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    if HEADING in text:
        new = text.replace(HEADING + section_of(text), HEADING + render(), 1)
    else:
        new = text.replace(NEXT, HEADING + render() + NEXT, 1)
    if "--write" in sys.argv:
        path.write_text(new, encoding="utf-8")
    else:
        print(render())
