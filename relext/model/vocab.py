"""The word vocabulary of a relation extractor: token <-> id, with PAD = 0 and UNK = 1.

The vocabulary is the Word2Vec vocabulary of the training sentences (see
:mod:`relext.model.embeddings`) plus the two special tokens; it is saved beside a run as
``vocab.json`` so a trained model can be rebuilt without retraining Word2Vec.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

PAD = "[PAD]"
UNK = "[UNK]"
PAD_ID = 0
UNK_ID = 1


def normalize_token(token: str, lowercase: bool = True) -> str:
    """The form a token is looked up (and Word2Vec is trained) in."""
    return token.lower() if lowercase else token


@dataclass
class Vocab:
    """Token list with ``PAD`` at 0 and ``UNK`` at 1; ``lowercase`` applies on lookup."""

    tokens: list[str]
    lowercase: bool = True
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.tokens) < 2 or self.tokens[PAD_ID] != PAD or self.tokens[UNK_ID] != UNK:
            raise ValueError(f"a vocabulary starts with {PAD!r}, {UNK!r}; got {self.tokens[:2]}")
        self._index = {t: i for i, t in enumerate(self.tokens)}
        if len(self._index) != len(self.tokens):
            raise ValueError("vocabulary tokens must be unique")

    @classmethod
    def from_words(cls, words: Iterable[str], lowercase: bool = True) -> "Vocab":
        seen: dict[str, None] = {}
        for w in words:
            if w not in (PAD, UNK):
                seen.setdefault(w, None)
        return cls([PAD, UNK, *seen], lowercase=lowercase)

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return normalize_token(token, self.lowercase) in self._index

    def id(self, token: str) -> int:
        return self._index.get(normalize_token(token, self.lowercase), UNK_ID)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        get, low = self._index.get, self.lowercase
        if low:
            return [get(t.lower(), UNK_ID) for t in tokens]
        return [get(t, UNK_ID) for t in tokens]

    def fingerprint(self) -> str:
        """sha256 of the token list (and the lowercase flag): ties a checkpoint to its vocabulary."""
        h = hashlib.sha256(b"lower" if self.lowercase else b"cased")
        for t in self.tokens:
            h.update(t.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()

    def to_json(self) -> dict:
        return {"lowercase": self.lowercase, "fingerprint": self.fingerprint(), "tokens": self.tokens}

    @classmethod
    def from_json(cls, obj: dict, *, source: str = "vocab") -> "Vocab":
        try:
            vocab = cls(list(obj["tokens"]), lowercase=bool(obj.get("lowercase", True)))
        except KeyError as exc:
            raise ValueError(f"{source}: missing field {exc.args[0]!r}") from None
        expected = obj.get("fingerprint")
        if expected is not None and expected != vocab.fingerprint():
            raise ValueError(f"{source}: fingerprint does not match its tokens (file damaged?)")
        return vocab

    def save(self, path: str | os.PathLike) -> Path:
        from wgbcore.atomicio import atomic_write_text

        return atomic_write_text(path, json.dumps(self.to_json(), ensure_ascii=False))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Vocab":
        path = Path(path)
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
        return cls.from_json(obj, source=str(path))
