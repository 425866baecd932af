"""Bags of sentences and their tensors.

Bags follow OpenNRE:

* training bags group the sentences of one fact ``(head, relation, tail)`` and carry that
  relation as their label;
* evaluation bags group the sentences of one entity pair ``(head, tail)`` (each sentence once)
  and carry every gold relation of the pair (``labels``); NA is class 0 and a pair's labels
  are ``[0]`` only when it has no positive relation.

Sentences are turned into tensors once per split (:class:`SentenceTable`); a batch of bags is
a flat batch of sentences plus a bag id per sentence, so selectors work with segment operations
and no Python loop per bag.

Word features (:func:`word_features`): token ids, two position features (relative position of
every token to the head / tail start, OpenNRE's encoding ``clip(i - p, -(L-1), L-1) + L``, 0 =
padding), PCNN pieces (1: up to the first entity start, 2: up to the second, 3: the rest,
0: padding) and lengths. Sentences longer than ``max_length`` are cut to a window that keeps both
entities: the shortest window around both mentions, centred; when the mentions are further
apart than ``max_length``, the first mention with the tokens after it and the second mention
with the tokens before it are kept (the middle is dropped).

Mentions that could not be located (span ``[-1, -1]``) are handled by ``unlocated``:

* ``"start"`` (default): the mention is taken to sit at token 0, i.e. position features are
  relative to the sentence start. The head of WikiGenderBias is the article's subject, which
  usually opens the sentence ("She married ..."), so this keeps those sentences usable; the
  same rule applies in training and evaluation.
* ``"skip"``: such sentences are left out of training bags (and counted); evaluation bags keep
  them with the ``"start"`` rule so every entity pair of a test split still gets a prediction.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import torch

from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS

UNLOCATED_POLICIES: tuple[str, ...] = ("start", "skip")
#: Columns a split must have (the canonical ``sentences`` configuration).
REQUIRED_COLUMNS: tuple[str, ...] = (
    "id", "entity_id", "sentence_id", "head", "tail", "relation", "gender",
    "tokens", "head_span", "tail_span",
)


def check_dataset(dataset: Mapping[str, Any], splits: Sequence[str] = SPLITS, *, source: str = "dataset") -> None:
    """Clear error when a DatasetDict lacks a split, a column, or has other relation names."""
    missing = [s for s in splits if s not in dataset]
    if missing:
        raise ValueError(f"{source}: missing split(s) {missing}; found {sorted(dataset)}; expected {list(splits)}")
    for s in splits:
        cols = set(dataset[s].column_names)
        lacking = [c for c in REQUIRED_COLUMNS if c not in cols]
        if lacking:
            raise ValueError(f"{source}: split {s!r} lacks feature(s) {lacking}; expected {list(REQUIRED_COLUMNS)}")
        feats = dataset[s].features
        for name, expected in (("relation", RELATIONS), ("gender", GENDERS)):
            names = getattr(feats[name], "names", None)
            if names is None or tuple(names) != tuple(expected):
                raise ValueError(
                    f"{source}: split {s!r} feature {name!r} must be ClassLabel{list(expected)}, got {feats[name]}"
                )


# --------------------------------------------------------------------------------------------
# rows of one split
# --------------------------------------------------------------------------------------------
@dataclass
class SplitRows:
    """The columns of one split the extractor needs, pulled out of Arrow once."""

    name: str
    entity_id: list[str]
    sentence_id: list[str]
    head: list[str]
    tail: list[str]
    relation: np.ndarray      # [N] int64
    gender: np.ndarray        # [N] int64
    tokens: list[list[str]]
    head_span: np.ndarray     # [N, 2] int64
    tail_span: np.ndarray     # [N, 2] int64

    @classmethod
    def from_dataset(cls, split, name: str) -> "SplitRows":
        cols = split.select_columns(list(REQUIRED_COLUMNS)).to_dict()
        n = len(cols["id"])

        def spans(key: str) -> np.ndarray:
            arr = np.asarray(cols[key], dtype=np.int64).reshape(n, 2) if n else np.zeros((0, 2), np.int64)
            return arr

        return cls(
            name=name,
            entity_id=cols["entity_id"],
            sentence_id=cols["sentence_id"],
            head=cols["head"],
            tail=cols["tail"],
            relation=np.asarray(cols["relation"], dtype=np.int64),
            gender=np.asarray(cols["gender"], dtype=np.int64),
            tokens=cols["tokens"],
            head_span=spans("head_span"),
            tail_span=spans("tail_span"),
        )

    def __len__(self) -> int:
        return len(self.tokens)

    def located(self) -> np.ndarray:
        """[N] bool: both mentions were located."""
        ok = lambda s: (s[:, 0] >= 0) & (s[:, 1] > s[:, 0])  # noqa: E731
        return ok(self.head_span) & ok(self.tail_span)


# --------------------------------------------------------------------------------------------
# truncation and word features
# --------------------------------------------------------------------------------------------
def keep_window(n: int, spans: Sequence[tuple[int, int]], max_length: int) -> np.ndarray:
    """Indices of the tokens kept from a sentence of ``n`` tokens (all when ``n <= max_length``)."""
    if n <= max_length:
        return np.arange(n)
    spans = sorted((max(0, s), min(e, n)) for s, e in spans if s >= 0 and e > s and s < n)
    if not spans:
        return np.arange(max_length)
    lo, hi = spans[0][0], max(e for _, e in spans)
    if hi - lo <= max_length:
        extra = max_length - (hi - lo)
        start = min(max(0, lo - extra // 2), n - max_length)
        return np.arange(start, start + max_length)
    (a0, _), (b0, b1) = spans[0], spans[-1]
    first = max_length // 2
    second = max_length - first
    p2 = max(b1 - second, a0 + first)
    if p2 > b0:  # the second mention is longer than its share: keep its start
        p2 = max(b0, a0 + first)
    return np.concatenate([np.arange(a0, a0 + first), np.arange(p2, min(p2 + second, n))])


@dataclass
class SentenceTable:
    """Tensors of every sentence of a split: ``features[name]`` is ``[N, ...]``; ``lengths`` [N]."""

    features: dict[str, torch.Tensor]
    lengths: torch.Tensor
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.lengths.shape[0])

    def gather(self, index: torch.Tensor) -> dict[str, torch.Tensor]:
        """Rows ``index`` trimmed to their longest length (2-D features only are trimmed)."""
        lengths = self.lengths.index_select(0, index)
        width = int(lengths.max()) if len(lengths) else 1
        out = {"lengths": lengths}
        for k, v in self.features.items():
            v = v.index_select(0, index)
            if v.dim() == 2 and k not in ("head", "tail"):
                v = v[:, :width]
            out[k] = v
        return out


def word_features(
    tokens: Sequence[Sequence[str]],
    head_spans: np.ndarray,
    tail_spans: np.ndarray,
    vocab,
    max_length: int = 120,
) -> SentenceTable:
    """Token ids, position features and PCNN pieces of every sentence (see module docstring)."""
    n = len(tokens)
    L = max_length
    ids = np.zeros((n, L), dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int64)
    head = np.zeros(n, dtype=np.int64)
    tail = np.zeros(n, dtype=np.int64)
    truncated = 0
    for i, toks in enumerate(tokens):
        m = len(toks)
        hs, ts = head_spans[i], tail_spans[i]
        if m > L:
            truncated += 1
            keep = keep_window(m, [tuple(hs), tuple(ts)], L)
            toks = [toks[j] for j in keep]
            h = int(np.searchsorted(keep, hs[0])) if hs[0] >= 0 else 0
            t = int(np.searchsorted(keep, ts[0])) if ts[0] >= 0 else 0
        else:
            h = int(hs[0]) if hs[0] >= 0 else 0
            t = int(ts[0]) if ts[0] >= 0 else 0
        m = len(toks)
        if m == 0:  # an empty sentence still gets one PAD token so every row has a length
            m = 1
            toks = []
        ids[i, : len(toks)] = vocab.encode(toks)
        lengths[i] = m
        head[i] = min(h, m - 1)
        tail[i] = min(t, m - 1)
    width = int(lengths.max()) if n else 1
    ar = np.arange(width)[None, :]
    valid = ar < lengths[:, None]

    def rel(p: np.ndarray) -> np.ndarray:
        out = np.clip(ar - p[:, None], -(L - 1), L - 1) + L
        return np.where(valid, out, 0)

    lo, hi = np.minimum(head, tail), np.maximum(head, tail)
    pieces = np.where(ar <= lo[:, None], 1, np.where(ar <= hi[:, None], 2, 3))
    pieces = np.where(valid, pieces, 0)
    feats = {
        "tokens": torch.from_numpy(ids[:, :width].copy()),
        "pos1": torch.from_numpy(rel(head)),
        "pos2": torch.from_numpy(rel(tail)),
        "pieces": torch.from_numpy(pieces),
        "head": torch.from_numpy(head),
        "tail": torch.from_numpy(tail),
    }
    return SentenceTable(feats, torch.from_numpy(lengths), {"truncated": truncated, "max_length": L})


# --------------------------------------------------------------------------------------------
# bags
# --------------------------------------------------------------------------------------------
@dataclass
class Bags:
    """Bags over the rows of one split: bag ``b`` is ``rows[offsets[b]:offsets[b+1]]``."""

    rows: np.ndarray                 # [S] row indices into the split / its SentenceTable
    offsets: np.ndarray              # [B + 1]
    label: np.ndarray                # [B] training label (fact relation; eval: first gold label)
    labels: list[list[int]]          # [B] gold relation ids of the bag
    meta: list[dict[str, Any]]       # per bag: entity_id, head, tail, gender, sentence_ids
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def select(self, bag_index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Flat row indices of the chosen bags and, per row, its position in ``bag_index``."""
        bag_index = np.asarray(bag_index, dtype=np.int64)
        starts = self.offsets[bag_index]
        counts = self.offsets[bag_index + 1] - starts
        total = int(counts.sum())
        seg = np.repeat(np.arange(len(bag_index)), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        flat = self.rows[np.repeat(starts, counts) + (np.arange(total) - first)]
        return torch.from_numpy(flat), torch.from_numpy(seg)


def _group(keys: Sequence[Any], order: np.ndarray) -> tuple[list[Any], dict[Any, list[int]]]:
    groups: dict[Any, list[int]] = {}
    for i in order:
        groups.setdefault(keys[i], []).append(int(i))
    return list(groups), groups


def training_bags(rows: SplitRows, *, unlocated: str = "start") -> Bags:
    """One bag per fact ``(entity, head, relation, tail)``; label = the relation."""
    if unlocated not in UNLOCATED_POLICIES:
        raise ValueError(f"unknown unlocated policy {unlocated!r}; expected one of {list(UNLOCATED_POLICIES)}")
    keep = np.ones(len(rows), dtype=bool) if unlocated == "start" else rows.located()
    keys = [(rows.entity_id[i], rows.head[i], int(rows.relation[i]), rows.tail[i]) for i in range(len(rows))]
    names, groups = _group(keys, np.flatnonzero(keep))
    flat, offsets, label, meta = [], [0], [], []
    for key in names:
        members = groups[key]
        flat.extend(members)
        offsets.append(len(flat))
        label.append(key[2])
        meta.append(_meta(rows, key[0], key[1], key[3], members))
    return Bags(
        rows=np.asarray(flat, dtype=np.int64),
        offsets=np.asarray(offsets, dtype=np.int64),
        label=np.asarray(label, dtype=np.int64),
        labels=[[lab] for lab in label],
        meta=meta,
        info={"kind": "train", "rows": len(rows), "skipped_unlocated": int((~keep).sum()),
              "unlocated": int((~rows.located()).sum()), "policy": unlocated},
    )


def evaluation_bags(rows: SplitRows) -> Bags:
    """One bag per entity pair ``(entity, head, tail)``; each sentence once; all gold labels."""
    keys = [(rows.entity_id[i], rows.head[i], rows.tail[i]) for i in range(len(rows))]
    names, groups = _group(keys, np.arange(len(rows)))
    flat, offsets, label, labels, meta = [], [0], [], [], []
    for key in names:
        members = groups[key]
        rels = sorted({int(rows.relation[i]) for i in members})
        positives = [r for r in rels if r != 0]
        gold = positives or [0]
        seen, uniq = set(), []
        for i in members:
            sid = rows.sentence_id[i]
            if sid not in seen:
                seen.add(sid)
                uniq.append(i)
        flat.extend(uniq)
        offsets.append(len(flat))
        label.append(gold[0])
        labels.append(gold)
        meta.append(_meta(rows, key[0], key[1], key[2], uniq))
    return Bags(
        rows=np.asarray(flat, dtype=np.int64),
        offsets=np.asarray(offsets, dtype=np.int64),
        label=np.asarray(label, dtype=np.int64),
        labels=labels,
        meta=meta,
        info={"kind": "eval", "rows": len(rows), "unlocated": int((~rows.located()).sum())},
    )


def _meta(rows: SplitRows, entity_id: str, head: str, tail: str, members: list[int]) -> dict[str, Any]:
    return {
        "entity_id": entity_id,
        "head": head,
        "tail": tail,
        "gender": GENDERS[int(rows.gender[members[0]])],
        "sentence_ids": [rows.sentence_id[i] for i in members],
    }


def iter_batches(bags: Bags, batch_size: int, order: np.ndarray | None = None) -> Iterator[np.ndarray]:
    order = np.arange(len(bags)) if order is None else order
    for s in range(0, len(order), batch_size):
        yield order[s : s + batch_size]
