"""Config files (YAML or JSON) and ``KEY=VALUE`` overrides, checked against a dataclass.

- :func:`parse_value` / :func:`parse_overrides`: ``["epochs=20", "name=x"]`` ->
  ``{"epochs": 20, "name": "x"}``; a value is JSON when it parses as JSON, else the string.
- :func:`read_config_file`: a YAML (``.yaml``, ``.yml``) or JSON file holding a mapping; malformed
  files, and a key given twice in one mapping (YAML and JSON would keep the last silently), are
  errors naming ``file:line`` and the key.
- :func:`check_fields`: unknown field names, values of the wrong type (read from the
  dataclass's annotations) and non-finite numbers (``.inf``, ``NaN``) are ``ValueError`` naming
  the source and the field; :func:`check_finite` the last for a built config object.
- :func:`load_config`: all three, then the dataclass.
- :func:`describe_fields` / :func:`fields_markdown`: the keys a config file or ``--set`` takes
  (name, type, default of every field), e.g. for the README's tables.
"""
from __future__ import annotations

import collections.abc
import dataclasses
import json
import math
import os
import re
import types
import typing
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["parse_value", "parse_overrides", "read_config_file", "check_fields", "check_finite", "load_config",
           "describe_fields", "fields_markdown", "markdown_table"]


def parse_value(text: str, *, commas: bool = False) -> Any:
    """``text`` as JSON when it parses (``3``, ``0.5``, ``true``, ``null``, ``[1, 2]``, ``"x"``),
    else the string itself. ``commas=True``: a non-JSON ``a,b`` is the tuple of its parsed parts."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        if commas and "," in text:
            return tuple(parse_value(part) for part in text.split(","))
        return text


def parse_overrides(items: Iterable[str], *, option: str = "--set", form: str = "KEY=VALUE",
                    commas: bool = False) -> dict[str, Any]:
    """``KEY=VALUE`` strings -> ``{KEY: parse_value(VALUE)}`` (later keys win). An item without
    ``=`` or with an empty key is a ``ValueError``: ``"--set takes KEY=VALUE, got 'oops'"``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{option} takes {form}, got {item!r}")
        out[key.strip()] = parse_value(value, commas=commas)
    return out


def read_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """The mapping in a YAML (``.yaml``, ``.yml``) or JSON (any other name) file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")   # a byte-order mark (Windows editors) is not content
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start})") from None
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            _refuse_duplicate_keys(yaml.compose(text, Loader=yaml.SafeLoader), path)
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise ValueError(f"{where}: malformed YAML ({getattr(e, 'problem', None) or e})") from None
        data = {} if data is None else data
    else:
        try:
            data = json.loads(text, object_pairs_hook=lambda pairs: _unique_json_keys(pairs, path, text))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{e.lineno}: malformed JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of fields, got {type(data).__name__}")
    return data


def _refuse_duplicate_keys(node, path: Path) -> None:
    """A key given twice in one mapping of a composed YAML document (nodes only: composing builds
    no object) is a ``ValueError`` naming ``path``, the line of the second one and the key. Keys
    compare by their resolved tag and text (``1`` and ``"1"`` differ, as they load); merge keys
    (``<<: *anchor``) are left to the loader, keys given beside them override."""
    import yaml

    stack, visited = [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in visited:
            continue
        visited.add(id(n))
        if isinstance(n, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for key_node, value_node in n.value:
                stack += [key_node, value_node]
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key, line = (key_node.tag, key_node.value), key_node.start_mark.line + 1
                if key in seen:
                    raise ValueError(f"{path}:{line}: key {key_node.value!r} given twice (first on line "
                                     f"{seen[key]}); keep one")
                seen[key] = line
        elif isinstance(n, yaml.SequenceNode):
            stack += n.value


def _unique_json_keys(pairs: list[tuple[str, Any]], path: Path, text: str) -> dict[str, Any]:
    """``json.loads``' object hook: a key given twice in one object is refused (the line is that of
    the key's second appearance in the file)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
            line = text.count("\n", 0, hits[1]) + 1 if len(hits) > 1 else None
            where = f"{path}:{line}" if line else str(path)
            raise ValueError(f"{where}: key {key!r} given twice; keep one")
        out[key] = value
    return out


def _nonfinite(value: Any) -> Any:
    """The first non-finite float in ``value`` (nested lists, tuples and dicts too), else None."""
    if isinstance(value, float):
        return value if not math.isfinite(value) else None
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for v in value:
            bad = _nonfinite(v)
            if bad is not None:
                return bad
    return None


def check_finite(obj: Any, *, source: str = "") -> Any:
    """``obj`` (a dataclass instance or a mapping of fields) when no field holds ``nan``/``inf``;
    else a ``ValueError`` naming ``source`` and the field. Every float hyperparameter is finite: an
    ``inf`` learning rate would train into NaN after the run folder was written."""
    items = obj.items() if isinstance(obj, Mapping) else (
        (f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init)
    prefix = f"{source}: " if source else ""
    for name, value in items:
        bad = _nonfinite(value)
        if bad is not None:
            raise ValueError(f"{prefix}field '{name}' must be a finite number, got {bad!r}")
    return obj


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) if isinstance(hint, type) else str(hint).replace("typing.", "")


def _matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` (as read from JSON/YAML) fits the annotation ``hint``; constructs this
    check does not know are accepted."""
    if hint is Any or hint is object:
        return True
    if hint is type(None) or hint is None:
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin in (list, set, frozenset, collections.abc.Sequence, collections.abc.Iterable):
        return isinstance(value, (list, tuple, set, frozenset)) and (
            not args or all(_matches(v, args[0]) for v in value))
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            return False
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return not args or all(_matches(v, args[0]) for v in value)
        return len(value) == len(args) and all(_matches(v, a) for v, a in zip(value, args))
    if origin in (dict, collections.abc.Mapping):
        return isinstance(value, dict) and (
            not args or all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items()))
    if isinstance(hint, type):
        if hint in (list, tuple):
            return isinstance(value, (list, tuple))
        return isinstance(value, hint)
    return True


def check_fields(cls: type, data: Mapping[str, Any], *, source: str = "") -> dict[str, Any]:
    """``data`` checked against the init fields of dataclass ``cls``: every key a field, every
    value of the field's annotated type; a ``ValueError`` naming ``source`` and the field otherwise."""
    prefix = f"{source}: " if source else ""
    flds = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(flds))
    if unknown:
        raise ValueError(f"{prefix}unknown {cls.__name__} fields {unknown}; expected some of {sorted(flds)}")
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that cannot be resolved here: check names only
        hints = {}
    for name, value in data.items():
        hint = hints.get(name, Any)
        if not _matches(value, hint):
            raise ValueError(f"{prefix}field '{name}' of {cls.__name__} expects {_type_name(hint)}, "
                             f"got {type(value).__name__} {value!r}")
    check_finite(data, source=source)
    return dict(data)


def load_config(cls: type, path: str | os.PathLike | None = None, overrides: Iterable[str] = (), *,
                values: Mapping[str, Any] | None = None, option: str = "--set") -> Any:
    """``cls(**fields)`` where fields are those of the file ``path`` (if any), then ``values``,
    then the ``KEY=VALUE`` ``overrides``, each layer checked with :func:`check_fields`."""
    data: dict[str, Any] = {}
    if path is not None:
        data.update(check_fields(cls, read_config_file(path), source=str(path)))
    if values:
        data.update(check_fields(cls, values))
    if overrides:
        data.update(check_fields(cls, parse_overrides(overrides, option=option), source=option))
    return cls(**data)


def _default_text(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        value = f.default_factory()  # type: ignore[misc]
    else:
        return "(required)"
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value)


def describe_fields(cls: type, *, exclude: Iterable[str] = ()) -> list[dict[str, str]]:
    """``{"name", "type", "default"}`` of every init field of dataclass ``cls``, in order: the
    keys a config file or ``--set`` takes. Defaults are written as JSON (``null``, ``[]``)."""
    skip = set(exclude)
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that cannot be resolved here: the annotation's text
        hints = {}
    out = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name in skip:
            continue
        hint = hints.get(f.name, f.type)
        out.append({"name": f.name, "type": hint if isinstance(hint, str) else _type_name(hint),
                    "default": _default_text(f)})
    return out


def markdown_table(header: list[str], rows: Iterable[Iterable[Any]]) -> str:
    """A GitHub markdown table (``|`` in cells escaped)."""
    def cell(x: Any) -> str:
        return str(x).replace("|", "\\|")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fields_markdown(cls: type, *, exclude: Iterable[str] = ()) -> str:
    """:func:`describe_fields` as a markdown table: key, type, default. A union's parts are code
    spans of their own (`` `str` | `None` ``): a ``|`` escaped inside a code span shows its backslash
    on the docs site, one between code spans shows as ``|`` everywhere."""
    return markdown_table(["key", "type", "default"],
                          ([f"`{d['name']}`", " | ".join(f"`{t}`" for t in d["type"].split(" | ")),
                            f"`{d['default']}`"]
                           for d in describe_fields(cls, exclude=exclude)))
