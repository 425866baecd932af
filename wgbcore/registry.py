"""One registry for every family of named components.

A :class:`Registry` maps names to factories (classes or functions). Names are looked up
case-insensitively and with ``-`` and ``_`` ignored (``"Trans-E"``, ``"trans_e"`` and ``"transe"``
are one name); aliases are further spellings of a registered name. An unknown name is a
``ValueError`` (also a ``KeyError``) that names the family and lists the registered names::

    MODELS = Registry("model")
    MODELS.register("transe", TransE)

    @MODELS.register("distmult", aliases=("dm",))
    class DistMult: ...

    MODELS.make("TransE", 100, 10, dim=50)   # TransE(100, 10, dim=50)
    MODELS.names()                           # ['distmult', 'transe']: the CLI's choices
    MODELS.get("foo")   # ValueError: unknown model 'foo'; expected one of ['distmult', 'transe']

A registry is a read-only mapping from canonical names to factories, so ``name in REG``,
``REG[name]``, ``sorted(REG)`` and ``REG.items()`` work as they do on a dict.
"""
from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator, Mapping
from typing import Any, Generic, Iterable, TypeVar

T = TypeVar("T")

__all__ = ["Registry", "UnknownNameError", "normalize"]


def normalize(name: str) -> str:
    """The lookup key of a name: lower case, without ``-``, ``_`` and surrounding blanks."""
    return name.strip().lower().replace("-", "").replace("_", "")


class UnknownNameError(ValueError, KeyError):
    """A name that is not registered (a ``ValueError``, and a ``KeyError`` for mapping use)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class Registry(Mapping, Generic[T]):
    """Named factories of one component family (``family`` is used in error messages)."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._items: dict[str, T] = {}        # canonical name -> factory, in registration order
        self._keys: dict[str, str] = {}       # normalised name or alias -> canonical name
        self._aliases: dict[str, str] = {}    # alias as written -> canonical name

    # -- registration -----------------------------------------------------------------------
    def register(self, name: str, obj: T | None = None, *, aliases: Iterable[str] = ()) -> Any:
        """Register ``obj`` as ``name``; without ``obj``, a decorator that registers what it decorates."""
        if obj is None:
            def decorator(target: T) -> T:
                self.register(name, target, aliases=aliases)
                return target
            return decorator
        key = normalize(name)
        if key in self._keys:
            raise ValueError(f"{self.family} '{name}' is already registered (as '{self._keys[key]}')")
        self._items[name] = obj
        self._keys[key] = name
        for alias in aliases:
            self.alias(alias, name)
        return obj

    def alias(self, alias: str, name: str) -> None:
        """Make ``alias`` another spelling of the registered ``name``."""
        target = self.canonical(name)
        key = normalize(alias)
        if key in self._keys and self._keys[key] != target:
            raise ValueError(f"{self.family} alias '{alias}' is already taken by '{self._keys[key]}'")
        self._keys[key] = target
        self._aliases[alias] = target

    # -- lookup -------------------------------------------------------------------------------
    def find(self, name: Any) -> str | None:
        """The canonical name ``name`` stands for, or None."""
        if not isinstance(name, str):
            return None
        return self._keys.get(normalize(name))

    def canonical(self, name: Any) -> str:
        """The canonical name ``name`` stands for; an :class:`UnknownNameError` otherwise."""
        found = self.find(name)
        if found is None:
            raise UnknownNameError(self.unknown_message(name))
        return found

    def unknown_message(self, name: Any, *, extra: str = "") -> str:
        """``unknown <family> 'x'; expected one of [...]`` (``extra`` is appended to the list)."""
        return f"unknown {self.family} {name!r}; expected one of {self.names()}{extra}"

    def get(self, name: Any, default: Any = inspect.Parameter.empty) -> T:  # type: ignore[override]
        """The factory registered as ``name`` (any spelling); unknown -> error, or ``default`` if given."""
        found = self.find(name)
        if found is None:
            if default is not inspect.Parameter.empty:
                return default
            raise UnknownNameError(self.unknown_message(name))
        return self._items[found]

    def make(self, name: Any, *args: Any, **options: Any) -> Any:
        """``get(name)(*args, **options)``; an option the factory does not take is a ``ValueError``
        naming it and the options it does take."""
        factory = self.get(name)
        known = self.options(name)
        if known is not None:
            unknown = sorted(set(options) - set(known))
            if unknown:
                raise ValueError(f"{self.family} '{self.canonical(name)}' has no option(s) {unknown}; "
                                 f"its options: {sorted(known)}")
        return factory(*args, **options)

    def options(self, name: Any) -> dict[str, Any] | None:
        """The keyword options of the factory of ``name`` with their defaults (a dataclass: its
        init fields), or None when it takes any keyword (``**kwargs``) or cannot be inspected."""
        factory = self.get(name)
        if dataclasses.is_dataclass(factory):
            return {f.name: (f.default if f.default is not dataclasses.MISSING else
                             f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
                    for f in dataclasses.fields(factory) if f.init}
        try:
            sig = inspect.signature(factory)
        except (TypeError, ValueError):
            return None
        params = sig.parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in params):
            return None
        return {p.name: (None if p.default is p.empty else p.default) for p in params
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}

    # -- listing ------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """The registered canonical names, sorted (a CLI's choices)."""
        return sorted(self._items)

    def choices(self, *, aliases: bool = False) -> list[str]:
        """The names a user may type: the canonical names, and with ``aliases=True`` the aliases too."""
        return self.names() + (sorted(self._aliases) if aliases else [])

    @property
    def aliases(self) -> dict[str, str]:
        """Alias as written -> canonical name."""
        return dict(self._aliases)

    # -- mapping protocol (canonical names only) -----------------------------------------------
    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return self.find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.family!r}, {self.names()})"

