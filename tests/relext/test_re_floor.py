"""benchmarks/re_floor_counts.py: the analytic FLOP count of a PCNN+attention training step against
a hand count and against the matrix products a real step runs (counted by its dispatch-mode
counter), and the batch statistics against a hand-built batch."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from relext.model.bags import word_features
from relext.model.bag_model import build_model
from relext.model.vocab import Vocab

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("re_floor_counts", ROOT / "benchmarks" / "re_floor_counts.py")
rfc = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("re_floor_counts", rfc)          # dataclasses look their module up
_spec.loader.exec_module(rfc)

WORDS = "alice bob married was born in paris a singer the of".split()
VOCAB = Vocab.from_words(WORDS)
DIMS = rfc.Dims(vocab=len(VOCAB), hidden=7, kernel=3, word_dim=6, pos_dim=3, max_length=14, bucket_size=2)


def _batch():
    sents = [["alice", "married", "bob"], ["bob", "was", "born", "in", "paris", "a", "b", "c"],
             ["alice", "was", "a", "singer"], ["the", "singer", "of", "paris", "alice"]]
    heads = np.array([[0, 1], [0, 1], [0, 1], [4, 5]])
    tails = np.array([[2, 3], [4, 5], [3, 4], [1, 2]])
    table = word_features(sents, heads, tails, VOCAB, DIMS.max_length)
    return table.gather(torch.arange(len(sents))), torch.tensor([0, 0, 1, 2]), 3


def test_batch_stats_by_hand():
    batch, _, bags = _batch()
    st = rfc.batch_stats(batch, bags, bucket_size=2)
    assert st["sentences"] == 4 and st["bags"] == 3 and st["tokens"] == 3 + 8 + 4 + 5
    # distinct ids: alice married bob was born in paris a <unk> singer the of (b and c are unknown)
    assert st["unique_words"] == 12
    # buckets of 2 sorted by length: (3, 4) -> 2 x 4, (5, 8) -> 2 x 8
    assert st["padded"] == 2 * 4 + 2 * 8 and st["buckets"] == 2


def test_gemm_flops_by_hand():
    st = {"sentences": 4, "bags": 3, "tokens": 20, "unique_words": 12, "padded": 24}
    h, k, dw, dp, r, c = 7, 3, 6, 3, 21, 5
    edge = 4 * 2 * 14                                      # (p + 1)^2 edge cases x 28 position ids
    classifier = 3 * 2 * 3 * r * c                        # forward + two backward products
    gather = 3 * 2 * 12 * dw * k * h + 3 * 2 * 2 * edge * k * dp * h + classifier
    dense = 3 * 2 * 24 * k * (dw + 2 * dp) * h + classifier
    assert rfc.totals(rfc.step_counts(st, DIMS, "gather"))["gemm_flops"] == gather
    assert rfc.totals(rfc.step_counts(st, DIMS, "dense"))["gemm_flops"] == dense


@pytest.mark.parametrize("path", ["gather", "dense"])
def test_gemm_flops_match_a_real_step(path):
    """The analytic matrix-product FLOPs equal those of the products one real training step runs
    (forward, backward, SGD), so the count describes the code, not a model of it."""
    torch.manual_seed(0)
    model = build_model("pcnn", "attention", num_words=len(VOCAB), word_dim=6, pos_dim=3, max_length=14, hidden=7,
                        kernel=3, bucket_size=2, conv_impl=path)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-5)
    batch, seg, bags = _batch()
    labels = torch.tensor([1, 2, 3])
    with rfc.OpTraffic() as traffic:
        loss = torch.nn.functional.cross_entropy(model(batch, seg, bags, labels), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    got = traffic.summary()
    want = rfc.totals(rfc.step_counts(rfc.batch_stats(batch, bags, 2), DIMS, path))
    assert got["gemm_flops"] == want["gemm_flops"] > 0
    assert got["stream_bytes"] > 0 and got["gather_bytes"] > 0
    assert "mm" in got["ops"] and got["ops"]["mm"]["calls"] >= 2
