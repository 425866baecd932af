"""Compound tokens: words joined by a hyphen, dash, slash or dot ("Brandenburg-Schwedt",
"Belgrade-based", "Governor-General", "Actor/Philanthropist", "Lewis-Briscoe", "NASA.Smith",
".Easter"), inside which :mod:`wikigenderbias.spans` also looks for names, places and labels."""
from __future__ import annotations

import re

#: What joins the words of a compound token.
COMPOUND_SEP = re.compile(r"[-‐‑–—−/.]+")
#: A joiner next to a character that is not a joiner or a space (searches from the joiner: fast).
HAS_COMPOUND = re.compile(r"[\-‐‑–—−/.](?:(?<=[^\s\-‐‑–—−/.].)|(?=[^\s\-‐‑–—−/.]))")
#: Splits text into the words of its tokens and of their compounds.
PIECE_SPLIT = re.compile(r"[\s\-‐‑–—−/.]+")


def compound_pieces(tokens: list[str]) -> tuple[list[str], list[int], list[bool]] | None:
    """The words of ``tokens`` with compounds split, the token each word comes from, and per
    token whether it was split; None when no token was."""
    if not HAS_COMPOUND.search(" ".join(tokens)):
        return None
    pieces: list[str] = []
    owner: list[int] = []
    split = [False] * len(tokens)
    for i, tok in enumerate(tokens):
        if not tok.isalnum() and len(tok) > 1 and COMPOUND_SEP.search(tok):
            words = [w for w in COMPOUND_SEP.split(tok) if w]
            if words and words != [tok]:
                split[i] = True
                pieces += words
                owner += [i] * len(words)
                continue
        pieces.append(tok)
        owner.append(i)
    return (pieces, owner, split) if any(split) else None
