"""Debiasing methods for relation extraction, and their resolver.

Registered debiasers (each follows :class:`relext.debias.base.Debiaser`):

=============== ============================================================== =================
name            what it does                                                   acts on
=============== ============================================================== =================
``none``        nothing (the baseline)                                         --
``anonymize``   person names -> E1, E2, ... per article, every split            dataset
``cda``         gender-swapped copies of the training rows (validation, tests  dataset
                intact)
``duplicate``   unchanged copies of the training rows: CDA's equal-budget      dataset
                control (same bags and updates, no swapping)
``hard_debias`` neutralize + equalize Word2Vec along the gender direction      vectors
                (options: ``restore_norms``; ``freeze``: the trainer keeps the
                debiased word embeddings fixed)
=============== ============================================================== =================

Combinations are written with ``+`` in any order (``"cda+anonymize"``) and always run in the fixed
order ``anonymize`` -> ``cda`` (dataset transforms) -> ``hard_debias`` (after Word2Vec): names are
anonymized first so that CDA never swaps first names that anonymization will remove anyway, and
the swapped copies carry the same E1/E2 labels. ``"all"`` is all three. The canonical name of a
combination lists its parts in that order (``"anonymize+cda"``).

Options can also be part of the name: ``"anonymize[ner=gazetteer]+cda[swap_names=false]"`` (what a
run config stores, so the name alone says what ran).

``get_debiaser(name, **options)``: for one method, ``options`` are its keyword arguments
(``get_debiaser("anonymize", ner="gazetteer")``); for a combination, pass one dict per part
(``get_debiaser("anonymize+cda", anonymize={"ner": "gazetteer"}, cda={"swap_names": False})``).
"""
from __future__ import annotations

from typing import Any

from wgbcore.registry import Registry

from relext.debias.anonymize import Anonymize
from relext.debias.base import Debiaser, NoDebias
from relext.debias.cda import CDA
from relext.debias.duplicate import Duplicate
from relext.debias.hard_debias import HardDebias

#: name -> class of every single debiaser (a :class:`wgbcore.registry.Registry`; aliases: other
#: spellings of one method).
DEBIASERS: Registry[type] = Registry("debiaser")
DEBIASERS.register("none", NoDebias, aliases=("baseline",))
DEBIASERS.register("anonymize", Anonymize, aliases=("na", "name_anonymization"))
DEBIASERS.register("cda", CDA, aliases=("gender_swap", "swap"))
DEBIASERS.register("duplicate", Duplicate)
DEBIASERS.register("hard_debias", HardDebias, aliases=("hard", "debiased_embeddings"))
#: The order in which the parts of a combination run.
ORDER: tuple[str, ...] = ("anonymize", "cda", "duplicate", "hard_debias")
#: Names that stand for a combination.
COMBINATIONS: dict[str, str] = {"all": "anonymize+cda+hard_debias"}
#: Every alias: of one method (``DEBIASERS.aliases``) or of a combination.
ALIASES: dict[str, str] = {**DEBIASERS.aliases, **COMBINATIONS}
#: The eight variants of the paper's study, in the order reports show them.
STUDY_VARIANTS: tuple[str, ...] = (
    "none", "anonymize", "cda", "hard_debias", "anonymize+cda", "anonymize+hard_debias",
    "cda+hard_debias", "anonymize+cda+hard_debias",
)


def _choices() -> list[str]:
    return DEBIASERS.names() + sorted(ALIASES)


def split_outside_brackets(text: str, sep: str) -> list[str]:
    """``text`` split on ``sep`` except inside ``[...]``."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _parse_part(part: str, name: str) -> tuple[str, dict[str, Any]]:
    """``"anonymize[ner=gazetteer]"`` -> ("anonymize", {"ner": "gazetteer"})."""
    part = part.strip()
    opts: dict[str, Any] = {}
    if "[" in part:
        if not part.endswith("]"):
            raise ValueError(f"debiaser {name!r}: options must be written as method[key=value,...]")
        part, _, body = part[:-1].partition("[")
        for item in body.split(","):
            key, sep, val = item.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"debiaser {name!r}: option {item!r} is not key=value")
            opts[key.strip()] = _value(val.strip())
    key = part.strip().lower().replace("-", "_")
    return COMBINATIONS.get(key) or DEBIASERS.find(key) or key, opts


def _parse(name: str) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"unknown debiaser {name!r}; expected one of {_choices()} or a '+' combination")
    flat: list[tuple[str, dict[str, Any]]] = []
    for part in split_outside_brackets(name.strip(), "+"):
        method, opts = _parse_part(part, name)
        for sub in method.split("+"):  # an alias may stand for a combination ("all")
            flat.append((sub, opts if sub == method else {}))
    names = [m for m, _ in flat]
    unknown = [m for m in names if m not in DEBIASERS]
    if unknown:
        raise ValueError(f"unknown debiaser {unknown[0]!r} in {name!r}; expected one of "
                         f"{_choices()} or a '+' combination of {list(ORDER)}")
    if len(set(names)) != len(names):
        raise ValueError(f"debiaser {name!r} names a method twice")
    real = [(m, o) for m, o in flat if m != "none"]
    if real and len(real) != len(flat):
        raise ValueError(f"debiaser {name!r}: 'none' cannot be combined with other methods")
    if {"cda", "duplicate"} <= set(names):
        raise ValueError(f"debiaser {name!r}: 'duplicate' is CDA's equal-budget control; combine it "
                         "with the other methods instead of with 'cda'")
    return sorted(real, key=lambda mo: ORDER.index(mo[0]))


def _spell(method: str, opts: dict[str, Any]) -> str:
    if not opts:
        return method
    body = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(opts.items()))
    return f"{method}[{body}]"


def canonical_name(name: str) -> str:
    """The canonical spelling of a debiaser or combination name (parts in ``ORDER``).

    Options may be written into a name, ``method[key=value,...]`` (``"anonymize[ner=gazetteer]+cda"``),
    so that a name alone (as stored in a run's config) says exactly what ran.
    """
    parts = _parse(name)
    return "+".join(_spell(m, o) for m, o in parts) if parts else "none"


def transform_versions(names) -> dict[str, int]:
    """``{method: version}`` of the methods named in ``names`` (debiaser or combination names)
    whose class declares a ``version`` above 1: what a run's identity records, so that a run of
    an older behaviour is refused instead of reused. ``"anonymize"`` -> ``{"anonymize": 2}``."""
    out: dict[str, int] = {}
    for name in names:
        for method, _ in _parse(name):
            v = int(getattr(DEBIASERS.get(method), "version", 1))
            if v > 1:
                out[method] = v
    return dict(sorted(out.items()))


class Compose:
    """Several debiasers run in ``ORDER``; ``describe()`` lists each part."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts
        self.name = "+".join(p.name for p in parts)

    def transform_dataset(self, dsdict, *, seed: int = 0):
        for p in self.parts:
            dsdict = p.transform_dataset(dsdict, seed=seed)
        return dsdict

    def transform_vectors(self, kv, *, seed: int = 0):
        for p in self.parts:
            kv = p.transform_vectors(kv, seed=seed)
        return kv

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "order": [p.name for p in self.parts],
                "parts": [p.describe() for p in self.parts]}


def _build(method: str, kwargs: dict[str, Any], name: str):
    try:
        return DEBIASERS.get(method)(**kwargs)
    except TypeError as exc:
        raise ValueError(f"debiaser {name!r}: bad option for {method!r}: {exc}") from None


def get_debiaser(name: str, **options: Any):
    """The debiaser called ``name`` (a method, an alias or a ``+`` combination)."""
    parsed = _parse(name) or [("none", {})]
    methods = [m for m, _ in parsed]
    if len(parsed) == 1:
        method, opts = parsed[0]
        kwargs = options.get(method, options) if set(options) <= {method} and options else options
        if not isinstance(kwargs, dict):
            raise ValueError(f"options for {method!r} must be a dict of keyword arguments")
        return _build(method, {**opts, **kwargs}, name)
    extra = [k for k in options if k not in methods]
    if extra:
        raise ValueError(f"options {extra} do not name a part of {canonical_name(name)!r}; pass one dict "
                         f"per part ({', '.join(f'{m}={{...}}' for m in methods)})")
    return Compose([_build(m, {**o, **dict(options.get(m) or {})}, name) for m, o in parsed])


__all__ = ["ALIASES", "COMBINATIONS", "DEBIASERS", "ORDER", "STUDY_VARIANTS", "Anonymize", "CDA", "Compose", "split_outside_brackets",
           "Debiaser", "Duplicate", "HardDebias", "NoDebias", "canonical_name", "get_debiaser",
           "transform_versions"]
