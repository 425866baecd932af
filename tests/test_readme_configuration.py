"""The docs site's configuration page (docs/configuration.md) is generated from the config classes
(never typed). Regenerate after changing a config class with

    .venv/bin/python tests/test_readme_configuration.py --write
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "configuration.md"

INTRO = """\
# Configuration

<!-- Generated from the config classes by tests/test_readme_configuration.py --write; do not edit. -->

Every `--config` file (`wgb re train`, `wgb kge train`, `wgb data build`) is YAML (`.yaml`, `.yml`)
or JSON (any other name; a run's `config.json` works), read by `wgbcore.config`: unknown keys and
values of the wrong type, a key given twice and a non-finite number (`.inf`, `NaN`) are one-line
errors naming the file and key (and line), and options given on the command line override the
file. `--set KEY=VALUE` (repeatable) reads VALUE as JSON when it parses
(`3`, `0.5`, `true`, `null`, `[1, 2]`), else as a string. Caches: Word2Vec vectors and spaCy
results under `$WGB_CACHE` (default `~/.cache/wgb`; `wgb re train --cache-dir` for Word2Vec), the
`datasets` cache under `$HF_DATASETS_CACHE`. The tables below are generated from the config classes
(`tests/test_readme_configuration.py` checks them).
"""


def render() -> str:
    """The whole page."""
    from kge.train import EmbeddingConfig
    from relext.training.train import TrainConfig
    from wgb.pipeline.config import PROFILES
    from wgbcore.config import fields_markdown, markdown_table
    from wikigenderbias.distant import DistantConfig
    from wikigenderbias.split import SplitConfig

    profiles = list(PROFILES)
    keys = list(PROFILES[profiles[0]])
    run = markdown_table(["key", *profiles], ([f"`{k}`", *(f"`{PROFILES[p][k]}`" for p in profiles)] for k in keys))
    return (f"{INTRO}\n## `wgb run`\n\n`wgb run --set KEY=VALUE`: the profile's settings (`--profile tiny|quick|full`).\n\n"
            f"{run}\n\n## Extractors: `wgb re train`, `wgb re grid`, `wgb re debias-grid`\n\n"
            "`wgb re grid --set` and `wgb re debias-grid --set`: fields of `relext.training.train.TrainConfig` for every\n"
            "run (also the keys of a `wgb re train --config` file; the commands' own options, such as\n"
            "`--encoder` or `--epochs`, set theirs). `conv_impl: null` is the encoder's own default: `gather` for\n"
            "CNN and PCNN (`relext.training.config.default_conv_impl`); a run record without the field\n"
            "was trained by `dense`.\n\n"
            f"{fields_markdown(TrainConfig)}\n\n## Embeddings: `wgb kge train`\n\n"
            "The keys of a `wgb kge train --config` file: fields of `kge.train.EmbeddingConfig` (a `--profile`\n"
            "sets several at once; options given on the command line override both).\n\n"
            f"{fields_markdown(EmbeddingConfig)}\n\n## Building: `wgb data build`\n\n"
            "A `wgb data build --config` file holds the build's options (`dbpedia`, `wikipedia`, `out`, `workers`,\n"
            "`executor`, `require`, ...) and two sections. `distant:` the selection rules, fields of\n"
            "`wikigenderbias.distant.DistantConfig` (`require_head: false` is the paper's rule):\n\n"
            f"{fields_markdown(DistantConfig)}\n\n`split:` fields of `wikigenderbias.split.SplitConfig`:\n\n"
            f"{fields_markdown(SplitConfig)}\n")


def test_configuration_page_is_generated_from_the_config_classes():
    assert PAGE.read_text(encoding="utf-8") == render(), "rerun: python tests/test_readme_configuration.py --write"


def test_the_page_shows_the_paper_rule_as_the_build_default():
    assert "| `require_head` | `bool` | `false` |" in render()


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
    if "--write" in sys.argv:
        from wgbcore.atomicio import atomic_write_text

        atomic_write_text(PAGE, render())
    else:
        print(render())
