"""Sentence encoders and their registry.

Every encoder maps a batch of sentence features (``dict`` of tensors, see
:func:`relext.model.bags.word_features`) to ``[n, out_dim]`` and names the features it needs
(``features = "words"`` or ``"wordpieces"``); :func:`featurize` builds them for a split.

A new encoder is one module with its class plus one ``ENCODERS.register`` line below; the tests
parametrized over ``ENCODERS`` then cover it.
"""
from __future__ import annotations

from typing import Any

from wgbcore.registry import Registry

from relext.model.encoders.cnn import CNNEncoder, PCNNEncoder
from relext.model.encoders.rnn import BiRNNEncoder, RNNEncoder
from relext.model.encoders.transformer import TransformerEncoder, available as transformer_available

ENCODERS: Registry[type] = Registry("encoder")
ENCODERS.register("cnn", CNNEncoder)
ENCODERS.register("pcnn", PCNNEncoder)
ENCODERS.register("rnn", RNNEncoder)
ENCODERS.register("birnn", BiRNNEncoder)
ENCODERS.register("transformer", TransformerEncoder)


def encoder_class(name: str) -> type:
    """The encoder class registered as ``name``."""
    return ENCODERS.get(name)


def get_encoder(name: str, **kwargs: Any):
    """Build encoder ``name`` (``num_words`` first; word_dim, pos_dim, max_length, hidden, ...)."""
    return ENCODERS.make(name, **kwargs)


def featurize(name: str, tokens, head_spans, tail_spans, *, vocab=None, max_length: int = 120, **options: Any):
    """The :class:`relext.model.bags.SentenceTable` encoder ``name`` reads."""
    cls = encoder_class(name)
    if cls.features == "words":
        from relext.model.bags import word_features

        return word_features(tokens, head_spans, tail_spans, vocab, max_length)
    from relext.model.encoders.transformer import transformer_features

    return transformer_features(tokens, head_spans, tail_spans, max_length=max_length, **options)


__all__ = ["ENCODERS", "get_encoder", "encoder_class", "featurize", "transformer_available",
           "CNNEncoder", "PCNNEncoder", "RNNEncoder", "BiRNNEncoder", "TransformerEncoder"]
