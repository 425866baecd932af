"""Every registered selector, checked against per-bag Python loops (OpenNRE's formulation)."""
import pytest
import torch

from relext.model.selectors import SELECTORS, get_selector
from relext.model.selectors.segment import segment_max, segment_mean, segment_softmax

H, C = 6, 5


@pytest.fixture
def bags():
    torch.manual_seed(0)
    sizes = [1, 3, 2, 4]
    seg = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    rep = torch.randn(len(seg), H)
    clf = torch.nn.Linear(H, C)
    labels = torch.tensor([0, 2, 1, 4])
    return rep, seg, len(sizes), clf, labels


def test_segment_ops(bags):
    rep, seg, num, _, _ = bags
    s = segment_softmax(rep[:, 0], seg, num)
    for b in range(num):
        torch.testing.assert_close(s[seg == b], torch.softmax(rep[seg == b, 0], 0))
        torch.testing.assert_close(segment_mean(rep, seg, num)[b], rep[seg == b].mean(0))
        torch.testing.assert_close(segment_max(rep, seg, num)[b], rep[seg == b].max(0).values)


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_shapes_and_permutation_invariance(name, bags):
    rep, seg, num, clf, labels = bags
    sel = get_selector(name, hidden=H, num_classes=C)
    pooled = sel.pool(rep, seg, num, clf, labels)
    assert pooled.shape == (num, H)
    probs = sel.predict_proba(rep, seg, num, clf)
    assert probs.shape == (num, C) and ((probs >= 0) & (probs <= 1)).all()
    perm = torch.randperm(len(seg))
    torch.testing.assert_close(sel.predict_proba(rep[perm], seg[perm], num, clf), probs)
    torch.testing.assert_close(sel.pool(rep[perm], seg[perm], num, clf, labels), pooled)
    (pooled.sum() + probs.sum()).backward()


def test_attention_matches_opennre_loop(bags):
    rep, seg, num, clf, labels = bags
    sel = get_selector("attention", hidden=H, num_classes=C)
    with torch.no_grad():
        sel.diag.uniform_(0.5, 1.5)
    q = clf.weight * sel.diag
    pooled = sel.pool(rep, seg, num, clf, labels)
    probs = sel.predict_proba(rep, seg, num, clf)
    for b in range(num):
        x = rep[seg == b]
        w = torch.softmax(x @ q[labels[b]], 0)
        torch.testing.assert_close(pooled[b], (w.unsqueeze(1) * x).sum(0))
        per_rel = torch.softmax(x @ q.t(), 0).t() @ x            # [C, H]: relation r attends with its query
        torch.testing.assert_close(probs[b], torch.softmax(clf(per_rel), -1).diag())


def test_average_and_one_match_loops(bags):
    rep, seg, num, clf, labels = bags
    avg = get_selector("average")
    one = get_selector("max")        # alias of "one"
    for b in range(num):
        x = rep[seg == b]
        torch.testing.assert_close(avg.predict_proba(rep, seg, num, clf)[b], torch.softmax(clf(x.mean(0)), -1))
        torch.testing.assert_close(one.predict_proba(rep, seg, num, clf)[b], torch.softmax(clf(x), -1).max(0).values)
        best = torch.log_softmax(clf(x), -1)[:, labels[b]].argmax()
        torch.testing.assert_close(one.pool(rep, seg, num, clf, labels)[b], x[best])


def test_unknown_selector_and_missing_labels(bags):
    rep, seg, num, clf, _ = bags
    with pytest.raises(ValueError, match="unknown selector 'median'; expected one of"):
        get_selector("median")
    with pytest.raises(ValueError, match="labels"):
        get_selector("attention", hidden=H).pool(rep, seg, num, clf, None)
