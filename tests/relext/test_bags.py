"""Bag building, truncation that keeps the entities, position features, dataset checks."""
import numpy as np
import pytest
import torch

from support.relext_data import tiny_dataset
from relext.model.bags import (SplitRows, check_dataset, evaluation_bags, keep_window, training_bags,
                         word_features)
from relext.model.vocab import Vocab


@pytest.fixture(scope="module")
def ds():
    return tiny_dataset(n_train=12, n_eval=4)


def test_keep_window_short_and_close_and_far():
    assert list(keep_window(5, [(0, 1), (3, 4)], 10)) == list(range(5))
    keep = keep_window(200, [(150, 152), (160, 161)], 20)
    assert len(keep) == 20 and {150, 151, 160}.issubset(set(keep))
    assert np.all(np.diff(keep) == 1)
    far = keep_window(300, [(5, 7), (250, 253)], 40)
    assert len(far) == 40 and {5, 6, 250, 251, 252}.issubset(set(far))
    assert np.all(np.diff(far) > 0)
    nothing = keep_window(300, [(-1, -1), (-1, -1)], 40)
    assert list(nothing) == list(range(40))


def test_word_features_positions_and_pieces():
    vocab = Vocab.from_words(["a", "b", "c", "h", "t"])
    toks = [["a", "h", "b", "t", "c"], ["t", "a"], ["x"] * 50 + ["h"] + ["x"] * 50 + ["t"]]
    heads = np.array([[1, 2], [-1, -1], [50, 51]])
    tails = np.array([[3, 4], [0, 1], [101, 102]])
    tab = word_features(toks, heads, tails, vocab, max_length=10)
    f = tab.features
    assert tab.lengths.tolist() == [5, 2, 10]
    assert f["head"].tolist()[:2] == [1, 0] and f["tail"].tolist()[:2] == [3, 0]
    # relative positions: L at the mention start, 0 on padding
    assert f["pos1"][0, :5].tolist() == [9, 10, 11, 12, 13]
    assert f["pos2"][1, :2].tolist() == [10, 11] and f["pos2"][1, 2:].tolist() == [0] * 8
    assert f["pieces"][0, :5].tolist() == [1, 1, 2, 2, 3]
    # the long sentence keeps both entity tokens at the recorded positions
    ids = f["tokens"][2]
    assert ids[f["head"][2]] == vocab.id("h") and ids[f["tail"][2]] == vocab.id("t")
    assert tab.info["truncated"] == 1
    sub = tab.gather(torch.tensor([1]))
    assert sub["tokens"].shape == (1, 2)


def test_training_bags_one_per_fact(ds):
    rows = SplitRows.from_dataset(ds["train"], "train")
    bags = training_bags(rows)
    keys = {(rows.entity_id[i], rows.relation[i], rows.tail[i]) for i in range(len(rows))}
    assert len(bags) == len(keys) and len(bags.rows) == len(rows)
    for b in range(len(bags)):
        members = bags.rows[bags.offsets[b]:bags.offsets[b + 1]]
        assert {int(rows.relation[i]) for i in members} == {int(bags.label[b])}
        assert len({rows.tail[i] for i in members}) == 1
    skipped = training_bags(rows, unlocated="skip")
    n_unlocated = int((~rows.located()).sum())
    assert n_unlocated > 0
    assert len(skipped.rows) == len(rows) - n_unlocated == len(rows) - skipped.info["skipped_unlocated"]
    with pytest.raises(ValueError, match="unlocated policy"):
        training_bags(rows, unlocated="guess")


def test_evaluation_bags_per_pair_with_all_labels(ds):
    split = ds["validation"]
    # a pair with two relations and a repeated sentence
    row = dict(split[0])
    extra = dict(row, id="x1", relation=1)
    split = split.add_item(extra)
    rows = SplitRows.from_dataset(split, "validation")
    bags = evaluation_bags(rows)
    pairs = {(rows.entity_id[i], rows.tail[i]) for i in range(len(rows))}
    assert len(bags) == len(pairs)
    first = next(b for b in range(len(bags)) if bags.meta[b]["tail"] == row["tail"]
                 and bags.meta[b]["entity_id"] == row["entity_id"])
    assert set(bags.labels[first]) == {row["relation"], 1} - {0} or bags.labels[first] == [row["relation"]]
    sids = bags.meta[first]["sentence_ids"]
    assert len(sids) == len(set(sids))
    assert bags.meta[first]["gender"] in ("male", "female")


def test_select_matches_loop(ds):
    rows = SplitRows.from_dataset(ds["train"], "train")
    bags = training_bags(rows)
    pick = np.array([3, 0, 7])
    flat, seg = bags.select(pick)
    expect = np.concatenate([bags.rows[bags.offsets[b]:bags.offsets[b + 1]] for b in pick])
    assert flat.tolist() == expect.tolist()
    assert seg.tolist() == sum(([k] * int(bags.sizes()[b]) for k, b in enumerate(pick)), [])


def test_check_dataset_errors(ds):
    check_dataset(ds)
    from datasets import DatasetDict

    with pytest.raises(ValueError, match="missing split"):
        check_dataset(DatasetDict({"train": ds["train"]}))
    broken = DatasetDict({k: v.remove_columns("tail_span") for k, v in ds.items()})
    with pytest.raises(ValueError, match="tail_span"):
        check_dataset(broken)
