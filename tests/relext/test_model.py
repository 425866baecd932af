"""Encoder x selector compositions: training logits, test probabilities, gradients."""
import itertools

import pytest
import torch

from relext.model.bags import word_features
from relext.model.encoders import ENCODERS
from relext.model.bag_model import build_model
from relext.model.selectors import SELECTORS
from relext.model.vocab import Vocab
import numpy as np

VOCAB = Vocab.from_words("alice bob married paris born in".split())
TOKENS = [["Alice", "married", "Bob"], ["Alice", "born", "in", "Paris"], ["Bob", "married", "Alice", "in", "Paris"]]
TABLE = word_features(TOKENS, np.array([[0, 1], [0, 1], [2, 3]]), np.array([[2, 3], [3, 4], [0, 1]]), VOCAB, 8)
WORD = [n for n, c in ENCODERS.items() if c.features == "words"]


@pytest.mark.parametrize("encoder,selector", list(itertools.product(WORD, sorted(SELECTORS))))
def test_composition(encoder, selector):
    torch.manual_seed(0)
    model = build_model(encoder, selector, num_words=len(VOCAB), word_dim=4, pos_dim=2, max_length=8, hidden=3)
    batch = TABLE.gather(torch.arange(3))
    seg = torch.tensor([0, 0, 1])
    labels = torch.tensor([1, 4])
    logits = model(batch, seg, 2, labels)
    assert logits.shape == (2, 5)
    torch.nn.functional.cross_entropy(logits, labels).backward()
    assert model.classifier.weight.grad.abs().sum() > 0
    model.eval()
    with torch.inference_mode():
        probs = model.predict_proba(batch, seg, 2)
    assert probs.shape == (2, 5) and torch.isfinite(probs).all()
    if selector != "attention":   # attention scores come from one softmax per relation query
        torch.testing.assert_close(probs.sum(1), torch.ones(2)) if selector == "average" else None


def test_vectors_initialize_word_embeddings():
    vec = np.random.default_rng(0).standard_normal((len(VOCAB), 4)).astype(np.float32)
    model = build_model("pcnn", "average", num_words=len(VOCAB), vectors=vec, word_dim=4, max_length=8, hidden=3)
    weight = model.encoder.embed.word.weight.detach().numpy()
    np.testing.assert_array_equal(weight[1:], vec[1:])
    assert not weight[0].any()      # the padding row embeds to zeros whatever the vectors say
    with pytest.raises(ValueError, match="shape"):
        build_model("pcnn", "average", num_words=len(VOCAB), vectors=vec[:, :3], word_dim=4, max_length=8)
