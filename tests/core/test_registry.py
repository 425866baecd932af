"""wgbcore.registry: names, aliases, options and errors."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from wgbcore.registry import Registry, UnknownNameError, normalize


@dataclass
class Margin:
    margin: float = 1.0


def softplus(pos, neg):
    return pos - neg


@pytest.fixture
def reg():
    r = Registry("loss")
    r.register("margin_ranking", Margin, aliases=("hinge",))
    r.register("softplus", softplus)
    return r


def test_names_are_normalised_case_and_separators(reg):
    assert normalize(" Margin-Ranking ") == normalize("margin_ranking") == "marginranking"
    for spelling in ("margin_ranking", "Margin-Ranking", "MARGINRANKING", "margin_Ranking"):
        assert reg.get(spelling) is Margin
        assert reg.canonical(spelling) == "margin_ranking"
        assert spelling in reg


def test_aliases_resolve_to_the_canonical_name(reg):
    assert reg.get("hinge") is Margin and reg.canonical("HINGE") == "margin_ranking"
    assert reg.aliases == {"hinge": "margin_ranking"}
    assert reg.choices() == ["margin_ranking", "softplus"]
    assert reg.choices(aliases=True) == ["margin_ranking", "softplus", "hinge"]


def test_listing_and_mapping_protocol(reg):
    assert reg.names() == ["margin_ranking", "softplus"] == sorted(reg)
    assert len(reg) == 2 and dict(reg.items()) == {"margin_ranking": Margin, "softplus": softplus}
    assert reg["Softplus"] is softplus and "nope" not in reg and None not in reg


def test_unknown_name_is_one_clear_error(reg):
    with pytest.raises(ValueError, match=r"^unknown loss 'nope'; expected one of \['margin_ranking', 'softplus'\]$"):
        reg.get("nope")
    with pytest.raises(KeyError):  # also a KeyError, for mapping use
        reg["nope"]
    with pytest.raises(UnknownNameError, match="unknown loss None"):
        reg.canonical(None)
    assert reg.get("nope", None) is None and reg.find("nope") is None
    assert reg.unknown_message("x", extra=" or 'all'").endswith("or 'all'")


def test_decorator_registers_and_returns_the_object():
    r = Registry("model")

    @r.register("tiny", aliases=("t",))
    class Tiny:
        def __init__(self, n: int, *, dim: int = 2) -> None:
            self.n, self.dim = n, dim

    assert Tiny.__name__ == "Tiny" and r.get("t") is Tiny
    assert r.make("tiny", 3, dim=4).dim == 4


def test_make_checks_options(reg):
    assert reg.make("hinge", margin=2.0).margin == 2.0
    assert reg.options("margin_ranking") == {"margin": 1.0}
    assert reg.options("softplus") == {"pos": None, "neg": None}
    with pytest.raises(ValueError, match=r"loss 'margin_ranking' has no option\(s\) \['colour'\]; its options: \['margin'\]"):
        reg.make("margin_ranking", colour="red")


def test_duplicate_names_and_aliases_are_refused(reg):
    with pytest.raises(ValueError, match="already registered"):
        reg.register("Soft-Plus", softplus)
    with pytest.raises(ValueError, match="already taken"):
        reg.alias("softplus", "margin_ranking")
    with pytest.raises(ValueError, match="unknown loss 'nope'"):
        reg.alias("x", "nope")
