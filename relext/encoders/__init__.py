"""Sentence encoders and their resolver.

Every encoder maps a batch of sentence features (``dict`` of tensors, see
:func:`relext.bags.word_features`) to ``[n, out_dim]`` and names the features it needs
(``features = "words"`` or ``"wordpieces"``); :func:`featurize` builds them for a split.
"""
from __future__ import annotations

from typing import Any

from relext.encoders.cnn import CNNEncoder, PCNNEncoder
from relext.encoders.rnn import BiRNNEncoder, RNNEncoder
from relext.encoders.transformer import TransformerEncoder, available as transformer_available

ENCODERS: dict[str, type] = {
    "cnn": CNNEncoder,
    "pcnn": PCNNEncoder,
    "rnn": RNNEncoder,
    "birnn": BiRNNEncoder,
    "transformer": TransformerEncoder,
}


def encoder_class(name: str) -> type:
    try:
        return ENCODERS[name]
    except KeyError:
        raise ValueError(f"unknown encoder {name!r}; expected one of {sorted(ENCODERS)}") from None


def get_encoder(name: str, **kwargs: Any):
    """Build encoder ``name`` (``num_words`` first; word_dim, pos_dim, max_length, hidden, ...)."""
    return encoder_class(name)(**kwargs)


def featurize(name: str, tokens, head_spans, tail_spans, *, vocab=None, max_length: int = 120, **options: Any):
    """The :class:`relext.bags.SentenceTable` encoder ``name`` reads."""
    cls = encoder_class(name)
    if cls.features == "words":
        from relext.bags import word_features

        return word_features(tokens, head_spans, tail_spans, vocab, max_length)
    from relext.encoders.transformer import transformer_features

    return transformer_features(tokens, head_spans, tail_spans, max_length=max_length, **options)


__all__ = ["ENCODERS", "get_encoder", "encoder_class", "featurize", "transformer_available",
           "CNNEncoder", "PCNNEncoder", "RNNEncoder", "BiRNNEncoder", "TransformerEncoder"]
