"""Pretrained relation extractors shipped inside ``relext``: no training run, no download.

Like OpenNRE's ``opennre.get_model(...)`` + ``model.infer(...)``::

    from relext import pretrained

    pretrained.available()                 # ["pcnn-attention"]
    model = pretrained.load("pcnn-attention")
    text = "Marie Curie married Pierre Curie in 1895 ."
    model.infer({"text": text, "h": {"name": "Marie Curie", "pos": [0, 11]},
                 "t": {"name": "Pierre Curie", "pos": [20, 32]}})
    # -> ("spouse", 0.9...)   (relation name, its probability; "NA" when no relation wins)

Each model is a folder ``relext/pretrained/<name>/`` shaped like a run directory
(``config.json``, ``vocab.json.gz``, ``model.safetensors``, ``metrics.json``, ``eval.json``,
``PROVENANCE.md``, ``SHA256SUMS``): :func:`path` gives it, and everything that takes a run
directory (``relext.training.predict.load_trained`` / ``predict_split``, ``relext.extract``,
``wgb re extract``) takes it too. :func:`load` checks ``SHA256SUMS`` first.

Items follow OpenNRE's ``infer`` input:

* ``{"text": str, "h": {"pos": [s, e], "name"?}, "t": {...}}``: ``pos`` are **character**
  offsets into ``text``, end exclusive (``text[s:e]`` is the mention), as in OpenNRE. The text
  is cut at the mention boundaries and each piece tokenized with ``relext.extract.tokenize``.
* ``{"token": [str, ...], "h": {"pos": [s, e]}, "t": {...}}``: ``pos`` are **token** offsets,
  end exclusive, as in OpenNRE; the tokens are used as given (the benchmark's own tokenization
  gives the benchmark's scores).
* ``pos`` may be left out when ``name`` is given: the mention is located in the tokens with the
  benchmark's rules (``wikigenderbias.spans.locate``, as ``wgb re extract --text`` does).
* A sentence that does not mention its head or its tail (a name not found in it, or ``pos``
  given as ``[-1, -1]``, the benchmark's "not located") says nothing about the pair: it is never
  scored. ``unmentioned="refuse"`` (the default) makes it an error naming the item;
  ``unmentioned="skip"`` leaves it out (counted in ``skipped``; a bag left without sentences
  gets no prediction: ``None`` from ``infer``, a row of NaN from ``predict_proba``).

A single item is scored as a bag of one sentence; :meth:`Extractor.infer_bags` scores bags of
sentences about one entity pair (OpenNRE's bag-level inference) in batches.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from wikigenderbias.schema import RELATIONS

DEFAULT = "pcnn-attention"
ROOT = Path(__file__).resolve().parent
CHECKSUMS = "SHA256SUMS"
MODEL_FILE = "model.safetensors"
NOT_LOCATED = (-1, -1)


def available() -> list[str]:
    """Names of the shipped pretrained extractors."""
    return sorted(p.name for p in ROOT.iterdir() if p.is_dir() and (p / MODEL_FILE).is_file())


def path(name: str = DEFAULT) -> Path:
    """The folder of a shipped model (a run-directory-like folder; read it, do not write into it)."""
    names = available()
    if name not in names:
        raise ValueError(f"unknown pretrained extractor {name!r}; available: {names}")
    return ROOT / name


def verify(name: str = DEFAULT) -> Path:
    """Check the files of a shipped model against its ``SHA256SUMS``; a one-line ``ValueError``
    naming the file when one differs."""
    from wgbcore.provenance import verify_checksums

    folder = path(name)
    if not (folder / CHECKSUMS).is_file():
        raise FileNotFoundError(f"{folder / CHECKSUMS}: missing; the pretrained model {name!r} is incomplete "
                                "(reinstall wgb)")
    return verify_checksums(folder, CHECKSUMS, hint=f"the pretrained model {name!r} is damaged (reinstall wgb)")


def load(name: str = DEFAULT, *, check: bool = True) -> "Extractor":
    """A shipped pretrained extractor, read from the installed package (no network). ``check``:
    verify its files against ``SHA256SUMS`` first."""
    folder = verify(name) if check else path(name)
    return Extractor.from_dir(folder, name=name, verify=False)  # verified just now, or not asked to


# --------------------------------------------------------------------------------------------
# the extractor
# --------------------------------------------------------------------------------------------
@dataclass
class Extractor:
    """A trained bag-level extractor in memory: OpenNRE-style ``infer`` on raw sentences."""

    path: Path
    config: Any            # relext.training.train.ExtractorConfig
    vocab: Any             # relext.model.vocab.Vocab
    model: Any             # relext.model.BagModel, eval mode
    name: str | None = None

    relations: tuple[str, ...] = RELATIONS

    @classmethod
    def from_dir(cls, run_dir: str | os.PathLike, *, name: str | None = None, verify: bool = True) -> "Extractor":
        """Any trained run directory, or a shipped model's folder (:func:`path`); a folder with a
        ``SHA256SUMS`` is checked against it (``verify``)."""
        from relext.training.predict import load_trained

        cfg, vocab, model = load_trained(run_dir, verify=verify)
        return cls(Path(run_dir), cfg, vocab, model, name=name)

    # ---- sentences and bags --------------------------------------------------------------
    def infer(self, item: Mapping[str, Any], *, unmentioned: str = "refuse",
              skipped: list | None = None) -> tuple[str, float] | None:
        """``(relation, probability)`` of one sentence (a bag of one), as OpenNRE's ``model.infer``;
        None when the sentence does not mention its head or tail and ``unmentioned="skip"``."""
        return self.infer_bags([[item]], unmentioned=unmentioned, skipped=skipped)[0]

    def infer_bag(self, bag: Sequence[Mapping[str, Any]], *, unmentioned: str = "refuse",
                  skipped: list | None = None) -> tuple[str, float] | None:
        """``(relation, probability)`` of a bag: sentences about one (head, tail) pair."""
        return self.infer_bags([bag], unmentioned=unmentioned, skipped=skipped)[0]

    def infer_bags(self, bags: Iterable[Sequence[Mapping[str, Any]]], *, unmentioned: str = "refuse",
                   skipped: list | None = None) -> list[tuple[str, float] | None]:
        """``(relation, probability)`` of every bag (the highest-scoring class, NA included); None
        for a bag whose sentences were all skipped (``unmentioned="skip"``)."""
        probs = self.predict_proba(bags, unmentioned=unmentioned, skipped=skipped)
        out: list[tuple[str, float] | None] = []
        for row in probs:
            if np.isnan(row).all():
                out.append(None)
                continue
            j = int(row.argmax())
            out.append((self.relations[j], float(row[j])))
        return out

    def predict_proba(self, bags: Iterable[Sequence[Mapping[str, Any]]], *, batch_size: int | None = None,
                      unmentioned: str = "refuse", skipped: list | None = None) -> np.ndarray:
        """[bags, relations] probabilities (columns in ``relations`` order, NA first); with the
        attention selector relation r's score comes from the bag attended with r's query. A
        sentence without its head or tail is refused, or (``unmentioned="skip"``) left out and
        named in ``skipped``; a bag left empty has a row of NaN."""
        from relext.model.bags import evaluation_bags
        from relext.protocols.data import PreparedSplit
        from relext.model.encoders import featurize
        from relext.training.train import featurize_options, predict_proba

        bags = [list(b) for b in bags]
        rows, kept = _split_rows(bags, unmentioned=unmentioned, skipped=skipped)
        out = np.full((len(bags), len(self.relations)), np.nan)
        if not kept:
            return out
        table = featurize(self.config.encoder, rows.tokens, rows.head_span, rows.tail_span, vocab=self.vocab,
                          max_length=self.config.max_length, **featurize_options(self.config))
        prepared = PreparedSplit("infer", rows, table, evaluation_bags(rows))
        if len(prepared.bags) != len(kept):  # pragma: no cover - one entity id per bag
            raise RuntimeError("bag grouping went wrong")
        out[kept] = predict_proba(self.model, prepared, batch_size or self.config.eval_batch_size)
        return out

    # ---- benchmark splits and files (through relext.training.predict / relext.extract) -------------
    def predict_split(self, split: str, *, dataset=None) -> list[dict]:
        """Prediction rows of a benchmark split (``relext.training.predict.predict_split``), in memory."""
        from relext.training.predict import predict_split

        return predict_split(self.path, split, dataset=dataset)

    def extract_split(self, split: str, **kwargs) -> list[dict]:
        """Triples of a benchmark split (``relext.extract.extract_split``); writes nothing."""
        from relext.extract import extract_split

        return extract_split(self.path, split, cache=False, **kwargs)

    def extract_text(self, text_file: str | os.PathLike, **kwargs) -> list[dict]:
        """Triples of a new-text JSON-lines file (``relext.extract.extract_text``)."""
        from relext.extract import extract_text

        return extract_text(self.path, text_file, **kwargs)


# --------------------------------------------------------------------------------------------
# OpenNRE items -> rows of the benchmark's sentence layout
# --------------------------------------------------------------------------------------------
def _pos(ent: Mapping[str, Any], key: str, where: str, limit: int, unit: str) -> tuple[int, int] | None:
    pos = ent.get("pos")
    if pos is None:
        return None
    if isinstance(pos, (list, tuple)) and list(pos) == [-1, -1]:
        return NOT_LOCATED
    if (not isinstance(pos, (list, tuple)) or len(pos) != 2 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                                     for x in pos)
            or not 0 <= pos[0] < pos[1] <= limit):
        raise ValueError(f"{where}: {key}.pos must be [start, end) {unit} offsets within 0..{limit}, got {pos!r}")
    return int(pos[0]), int(pos[1])


def _tokens_of(item: Mapping[str, Any], where: str) -> tuple[list[str], list[tuple[int, int] | None], list[str]]:
    """Tokens, the (head, tail) token spans given (None: locate by name) and the names."""
    from relext.extract import tokenize

    if not isinstance(item, Mapping):
        raise ValueError(f"{where}: expected an object with 'text' or 'token', 'h' and 't'")
    ents, names = [], []
    for key in ("h", "t"):
        ent = item.get(key)
        if not isinstance(ent, Mapping):
            raise ValueError(f"{where}: field {key!r} must be an object with 'pos' and / or 'name'")
        name = ent.get("name", "")
        if not isinstance(name, str):
            raise ValueError(f"{where}: {key}.name must be a string")
        if ent.get("pos") is None and not name.strip():
            raise ValueError(f"{where}: {key} needs 'pos' or a 'name' to locate")
        ents.append(ent)
        names.append(name)
    has_text, has_token = "text" in item, "token" in item
    if has_text == has_token:
        raise ValueError(f"{where}: give exactly one of 'text' (character positions) or 'token' (token positions)")
    if has_token:
        tokens = item["token"]
        if not isinstance(tokens, list) or not tokens or not all(isinstance(t, str) for t in tokens):
            raise ValueError(f"{where}: field 'token' must be a non-empty list of strings")
        spans = [_pos(e, k, where, len(tokens), "token") for e, k in zip(ents, ("h", "t"))]
        return list(tokens), spans, names
    text = item["text"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}: field 'text' must be a non-empty string")
    chars = [_pos(e, k, where, len(text), "character") for e, k in zip(ents, ("h", "t"))]
    # cut the text at every mention boundary, so each mention is whole tokens (OpenNRE's way)
    cuts = sorted({0, len(text), *(x for c in chars if c and c != NOT_LOCATED for x in c)})
    tokens: list[str] = []
    at: dict[int, int] = {}
    for a, b in zip(cuts, cuts[1:]):
        at[a] = len(tokens)
        tokens.extend(tokenize(text[a:b]))
    at[len(text)] = len(tokens)
    spans = []
    for c, key in zip(chars, ("h", "t")):
        if c is None or c == NOT_LOCATED:
            spans.append(c)
            continue
        s, e = at[c[0]], at[c[1]]
        if s >= e:
            raise ValueError(f"{where}: {key}.pos {list(c)} covers no token of the text ({text[c[0]:c[1]]!r})")
        spans.append((s, e))
    if not tokens:
        raise ValueError(f"{where}: the text has no tokens")
    return tokens, spans, names


UNMENTIONED = ("refuse", "skip")


def _split_rows(bags: list[list[Mapping[str, Any]]], *, unmentioned: str = "refuse", skipped: list | None = None):
    """(:class:`relext.model.bags.SplitRows` with one entity id per kept bag (relation unknown: NA), the
    indices of the kept bags). Sentences that do not mention their head or tail are refused or
    skipped (``unmentioned``); a bag without sentences left is not kept."""
    from relext.model.bags import SplitRows
    from wikigenderbias.spans import locate

    if unmentioned not in UNMENTIONED:
        raise ValueError(f"unmentioned must be one of {UNMENTIONED}, got {unmentioned!r}")
    if not bags:
        raise ValueError("no bags to score")
    entity, sid, heads, tails, tokens, hs, ts = [], [], [], [], [], [], []
    kept: list[int] = []
    for b, bag in enumerate(bags):
        if not bag:
            raise ValueError(f"bag {b}: empty (a bag needs at least one sentence)")
        for i, item in enumerate(bag):
            where = f"bag {b} item {i}" if len(bags) > 1 or len(bag) > 1 else "item"
            toks, spans, names = _tokens_of(item, where)
            if spans[0] is None or spans[1] is None:
                found = locate(toks, names[0], names[1], "NA")
                spans = [spans[0] or tuple(found.head_span), spans[1] or tuple(found.tail_span)]
            missing = [f"{role} {name!r}" if name else role
                       for role, name, span in (("head", names[0], spans[0]), ("tail", names[1], spans[1]))
                       if tuple(span) == NOT_LOCATED]
            if missing:
                if unmentioned == "refuse":
                    raise ValueError(f"{where}: the sentence does not mention its {' nor its '.join(missing)}, so "
                                     "it says nothing about the pair; give a sentence that names both (or their "
                                     "'pos'), or skip such sentences (unmentioned='skip', --unmentioned skip)")
                if skipped is not None:
                    skipped.append(f"{where}: no {' and no '.join(missing)}")
                continue
            if not kept or kept[-1] != b:
                kept.append(b)
            entity.append(f"bag-{b}")
            sid.append(f"bag-{b}-{i}")
            # one (head, tail) key per bag, whatever names its items carry
            heads.append(f"bag-{b}-head")
            tails.append(f"bag-{b}-tail")
            tokens.append(toks)
            hs.append(spans[0])
            ts.append(spans[1])
    n = len(tokens)
    return SplitRows(name="infer", entity_id=entity, sentence_id=sid, head=heads, tail=tails,
                     relation=np.zeros(n, np.int64), gender=np.zeros(n, np.int64), tokens=tokens,
                     head_span=np.asarray(hs, np.int64).reshape(n, 2),
                     tail_span=np.asarray(ts, np.int64).reshape(n, 2)), kept
