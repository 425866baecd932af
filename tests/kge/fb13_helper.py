"""FB13 for the bias tests: the copy shipped in the package (``kge.graph.load_fb13``)."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def load_fb13_for_tests():
    from kge.graph import load_fb13

    return load_fb13()
