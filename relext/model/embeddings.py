"""Word2Vec vectors trained on the training sentences (as in the WikiGenderBias paper), cached.

The cache key is the sha256 of the corpus (every token of every sentence, in order) and of the
Word2Vec parameters, so a debiased corpus (CDA, anonymization) gets its own vectors and the same
corpus is never trained twice. Training uses one worker thread and a deterministic word hash, so
one seed gives the same vectors in every process.

Cache layout: ``<cache_dir>/<key>.npz`` (``vectors``) + ``<key>.json`` (``words``, params),
both written atomically. Default cache dir: ``$WGB_CACHE/word2vec`` or
``~/.cache/wgb/word2vec``.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from wgbcore.atomicio import atomic_write_bytes
from wgbcore.atomicio import atomic_write_text


@dataclass(frozen=True)
class Word2VecParams:
    """gensim Word2Vec parameters (dim 50 = OpenNRE; the WikiGenderBias authors used 100)."""

    dim: int = 50
    window: int = 5
    min_count: int = 2
    sg: int = 0            # 0 = CBOW (gensim's default), 1 = skip-gram
    negative: int = 5
    epochs: int = 5
    seed: int = 0
    lowercase: bool = True

    def to_json(self) -> dict:
        return asdict(self)


def default_cache_dir() -> Path:
    root = os.environ.get("WGB_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "wgb"
    return base / "word2vec"


def _stable_hash(text: str) -> int:
    """Replaces Python's salted ``hash`` for gensim's per-word vector seeding."""
    return zlib.crc32(text.encode("utf-8"))


def corpus_key(sentences: Iterable[Sequence[str]], params: Word2VecParams) -> str:
    h = hashlib.sha256(json.dumps(params.to_json(), sort_keys=True).encode())
    n = 0
    for sent in sentences:
        h.update("\x1f".join(sent).encode("utf-8"))
        h.update(b"\x1e")
        n += 1
    h.update(str(n).encode())
    return h.hexdigest()[:32]


def train_word2vec(
    sentences: Sequence[Sequence[str]],
    params: Word2VecParams = Word2VecParams(),
    *,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
):
    """Train (or load from the cache) Word2Vec on ``sentences``; returns gensim ``KeyedVectors``."""
    from gensim.models import KeyedVectors, Word2Vec

    if params.lowercase:
        sentences = [[t.lower() for t in s] for s in sentences]
    else:
        sentences = [list(s) for s in sentences]
    if not sentences or not any(sentences):
        raise ValueError("cannot train Word2Vec on an empty corpus")
    key = corpus_key(sentences, params)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    npz, meta = cache / f"{key}.npz", cache / f"{key}.json"
    if use_cache and npz.exists() and meta.exists():
        try:
            words = json.loads(meta.read_text(encoding="utf-8"))["words"]
            vectors = np.load(npz)["vectors"]
            if vectors.shape == (len(words), params.dim):
                kv = KeyedVectors(params.dim)
                kv.add_vectors(words, vectors)
                return kv
        except Exception:  # damaged cache entry: retrain and overwrite
            pass
    model = Word2Vec(
        sentences=sentences,
        vector_size=params.dim,
        window=params.window,
        min_count=params.min_count,
        sg=params.sg,
        negative=params.negative,
        epochs=params.epochs,
        seed=params.seed,
        workers=1,
        hashfxn=_stable_hash,
    )
    kv = model.wv
    if use_cache:
        buf = io.BytesIO()
        np.savez(buf, vectors=kv.vectors.astype(np.float32))
        atomic_write_bytes(npz, buf.getvalue())
        atomic_write_text(meta, json.dumps({"words": list(kv.index_to_key), "params": params.to_json()}))
    return kv


def embedding_matrix(vocab, kv, *, seed: int = 0) -> np.ndarray:
    """[len(vocab), dim] float32: Word2Vec rows for known words, PAD = 0, UNK and the rest small
    random (OpenNRE: N(0, 1/dim))."""
    from relext.model.vocab import PAD_ID

    dim = kv.vector_size
    rng = np.random.default_rng(seed)
    mat = (rng.standard_normal((len(vocab), dim)) / np.sqrt(dim)).astype(np.float32)
    mat[PAD_ID] = 0.0
    for i, tok in enumerate(vocab.tokens):
        j = kv.key_to_index.get(tok)
        if j is not None:
            mat[i] = kv.vectors[j]
    return mat
