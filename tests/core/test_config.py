"""wgbcore.config: KEY=VALUE parsing, config files, type checks naming the field."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from wgbcore.config import check_fields, load_config, parse_overrides, parse_value, read_config_file


@dataclass
class Cfg:
    model: str = "transe"
    dim: int = 100
    lr: float = 0.01
    limit: int | None = None
    flag: bool = False
    tags: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def test_values_are_json_when_they_parse_else_strings():
    assert parse_value("3") == 3 and parse_value("0.5") == 0.5 and parse_value("true") is True
    assert parse_value("null") is None and parse_value("[1, 2]") == [1, 2] and parse_value('"7"') == "7"
    assert parse_value("pcnn") == "pcnn" and parse_value("") == "" and parse_value("a,b") == "a,b"
    assert parse_value("10,50", commas=True) == (10, 50) and parse_value("x,2", commas=True) == ("x", 2)


def test_overrides_parse_once_and_later_keys_win():
    assert parse_overrides([" dim =8", "model=distmult", "dim=16", "name=a=b"]) == {
        "dim": 16, "model": "distmult", "name": "a=b"}
    with pytest.raises(ValueError, match=r"^--set takes KEY=VALUE, got 'oops'$"):
        parse_overrides(["oops"])
    with pytest.raises(ValueError, match=r"^--option takes FIELD=VALUE, got '=3'$"):
        parse_overrides(["=3"], option="--option", form="FIELD=VALUE")


def test_type_errors_name_the_source_and_the_field():
    with pytest.raises(ValueError, match=r"^cfg.yaml: field 'dim' of Cfg expects int, got str '8'$"):
        check_fields(Cfg, {"dim": "8"}, source="cfg.yaml")
    with pytest.raises(ValueError, match=r"field 'flag' of Cfg expects bool"):
        check_fields(Cfg, {"flag": 1})
    with pytest.raises(ValueError, match=r"field 'dim' of Cfg expects int, got bool"):
        check_fields(Cfg, {"dim": True})
    with pytest.raises(ValueError, match=r"field 'tags' of Cfg expects list\[str\]"):
        check_fields(Cfg, {"tags": ["a", 2]})
    with pytest.raises(ValueError, match=r"unknown Cfg fields \['dimm'\]; expected some of \["):
        check_fields(Cfg, {"dimm": 8})
    ok = {"lr": 1, "limit": None, "tags": ["a"], "extra": {"p_norm": 1}, "model": "rotate"}
    assert check_fields(Cfg, ok) == ok  # an int is a float; None where the field allows it


def test_yaml_and_json_files_with_overrides(tmp_path):
    (tmp_path / "c.yaml").write_text("model: complex\ndim: 32\ntags: [a, b]\n")
    (tmp_path / "c.json").write_text('{"model": "rotate", "lr": 0.1}')
    cfg = load_config(Cfg, tmp_path / "c.yaml", ["dim=64", "flag=true"])
    assert cfg == Cfg(model="complex", dim=64, flag=True, tags=["a", "b"])
    assert load_config(Cfg, tmp_path / "c.json", values={"limit": 5}) == Cfg(model="rotate", lr=0.1, limit=5)
    with pytest.raises(ValueError, match=r"^--set: field 'dim' of Cfg expects int, got str 'big'$"):
        load_config(Cfg, overrides=["dim=big"])
    (tmp_path / "typo.yaml").write_text("dim: [1, 2\n")
    with pytest.raises(ValueError, match=r"typo.yaml:\d+: malformed YAML"):
        read_config_file(tmp_path / "typo.yaml")
    (tmp_path / "typo.json").write_text('{"dim": 1,,}')
    with pytest.raises(ValueError, match=r"typo.json:1: malformed JSON"):
        read_config_file(tmp_path / "typo.json")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ValueError, match="list.yaml: expected a mapping of fields, got list"):
        read_config_file(tmp_path / "list.yaml")
    (tmp_path / "wrong.yaml").write_text("dim: eight\n")
    with pytest.raises(ValueError, match=r"wrong.yaml: field 'dim' of Cfg expects int"):
        load_config(Cfg, tmp_path / "wrong.yaml")
