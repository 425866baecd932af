"""Label-noise sensitivity (wgbstudies.label_noise): the marriage-word rule, the rates by
population and gender, and the spouse F1 gap with and without spouse bags that have no marriage
word (known answers on a tiny fixture; plain and cross-fitted prediction sets)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import Dataset, DatasetDict

from wgbstudies import label_noise as ln
from wikigenderbias.schema import GENDERS, RELATIONS

ROOT = Path(__file__).resolve().parents[2]
SP, HY = RELATIONS.index("spouse"), RELATIONS.index("hypernym")


def test_marriage_word_rule():
    assert ln.has_marriage_word("She Married him in 1990 .".split())
    assert ln.has_marriage_word("with his then-wife Demi Moore".split())      # a compound's word
    assert ln.has_marriage_word("Howard 's widow , actress Helen Cherry".split())
    assert not ln.has_marriage_word("In 2012 he became engaged to her .".split())
    assert ln.has_marriage_word("engaged to her".split(), ln.MARRIAGE_WORDS | ln.ENGAGEMENT_WORDS)
    assert not ln.has_marriage_word("a wedge of cheese ; Wedgwood".split())
    assert ln.MARRIAGE_WORDS.isdisjoint(ln.ENGAGEMENT_WORDS)


# the fixture: (split, entity, gender, tail, relation, sentence)
ROWS = [
    ("male_test", "m0", "male", "Ann", "spouse", "He married Ann ."),
    ("male_test", "m0", "male", "actor", "hypernym", "He was an actor ."),
    ("male_test", "m1", "male", "Bea", "spouse", "He and his wife Bea toured ."),
    ("female_test", "f0", "female", "Carl", "spouse", "She wed Carl ."),
    ("female_test", "f1", "female", "Dan", "spouse", "She starred with Dan in a film ."),
    ("female_test", "f1", "female", "Dan", "spouse", "Dan and she met in Paris ."),
    ("train", "t0", "female", "Eve", "spouse", "She met Eve ."),
    ("train", "t1", "male", "Fay", "spouse", "His wife Fay ."),
    ("train", "t1", "male", "Gil", "hypernym", "He was a gil ."),
    ("validation", "v0", "male", "Hal", "spouse", "He met Hal ."),
]


def _dataset() -> DatasetDict:
    cols: dict[str, dict[str, list]] = {}
    for i, (split, e, g, tail, rel, text) in enumerate(ROWS):
        c = cols.setdefault(split, {k: [] for k in
                                    ("entity_id", "sentence_id", "tail", "relation", "gender", "tokens")})
        c["entity_id"].append(e)
        c["sentence_id"].append(f"{e}-s{i}")
        c["tail"].append(tail)
        c["relation"].append(RELATIONS.index(rel))
        c["gender"].append(GENDERS.index(g))
        c["tokens"].append(text.split())
    return DatasetDict({s: Dataset.from_dict(c) for s, c in cols.items()})


@pytest.fixture(scope="module")
def ev():
    return ln.spouse_evidence(_dataset())


def test_rates_by_population_and_gender(ev):
    r = ln.rates(ev)
    assert r["test"]["female"] == {"spouse_bags": 2, "without_word": 1, "rate": 0.5}
    assert r["test"]["male"] == {"spouse_bags": 2, "without_word": 0, "rate": 0.0}
    assert r["distant"]["female"] == {"spouse_bags": 1, "without_word": 1, "rate": 1.0}
    assert r["distant"]["male"] == {"spouse_bags": 2, "without_word": 1, "rate": 0.5}
    assert ev.population_of["v0"] == "distant" and ev.population_of["f1"] == "test"


def test_evidence_errors():
    bad = DatasetDict({"dev": Dataset.from_dict({"entity_id": ["x"]})})
    with pytest.raises(ValueError, match="split 'dev'"):
        ln.spouse_evidence(bad)
    with pytest.raises(ValueError, match="lacks the column 'tokens'"):
        ln.spouse_evidence(DatasetDict({"train": Dataset.from_dict({"entity_id": ["x"], "sentence_id": ["s"],
                                                                    "tail": ["t"], "relation": [1], "gender": [0]})}))


def _row(e, g, tail, labels, pred, sids, split, key):
    scores = [0.0] * len(RELATIONS)
    scores[pred] = 1.0
    row = {"bag_id": f"{e}|{tail}", "entity_id": e, "gender": g, "labels": labels, "scores": scores, "split": split}
    if key == "sentence_ids":
        row["sentence_ids"] = sids
    elif key == "tail":
        row["bag_id"], row["tail"] = f"bag-{e}-{tail}", tail
    return row


def _test_rows(key="sentence_ids"):
    """m0: spouse TP and a hypernym bag predicted spouse (FP); m1: spouse TP; f0: spouse TP;
    f1: spouse bag without a marriage word, predicted NA (FN)."""
    spec = [("m0", "male", "Ann", [SP], SP, ["m0-s0"], "male_test"),
            ("m0", "male", "actor", [HY], SP, ["m0-s1"], "male_test"),
            ("m1", "male", "Bea", [SP], SP, ["m1-s2"], "male_test"),
            ("f0", "female", "Carl", [SP], SP, ["f0-s3"], "female_test"),
            ("f1", "female", "Dan", [SP], 0, ["f1-s4", "f1-s5"], "female_test")]
    return [(f"preds.jsonl:{i + 1}", _row(*s, key=key)) for i, s in enumerate(spec)]


@pytest.mark.parametrize("key", ["sentence_ids", "tail", "bag_id"])
def test_gap_with_and_without_known_answer(ev, key):
    res = ln.spouse_gap_sensitivity([_test_rows(key)], ev, n_resamples=200)
    # all bags: male tp 2, fp 1 -> F1 0.8; female tp 1, fn 1 -> F1 2/3
    assert res["all"]["f1_male"] == pytest.approx(0.8) and res["all"]["f1_female"] == pytest.approx(2 / 3)
    assert res["all"]["value"] == pytest.approx(0.8 - 2 / 3)
    # without f1's bag (no marriage word): female F1 1
    assert res["without"]["value"] == pytest.approx(0.8 - 1.0)
    assert res["difference"]["value"] == pytest.approx(-0.2 - (0.8 - 2 / 3))
    assert res["dropped_bags_per_run"] == [{"male": 0, "female": 1}]
    assert res["interval"].startswith("entities") and res["n_runs"] == 1
    lo, hi = res["all"]["ci"]
    assert lo <= res["all"]["value"] <= hi


def test_population_filter_and_three_runs(ev):
    rows = _test_rows()
    res = ln.spouse_gap_sensitivity([rows, rows, rows], ev, population="test", n_resamples=200)
    assert res["interval"] == "seeds x entities" and res["population"] == "test"
    assert res["without"]["value"] == pytest.approx(-0.2)
    with pytest.raises(ValueError, match="no test entity of gender"):
        ln.spouse_gap_sensitivity([rows], ev, population="distant", n_resamples=200)
    with pytest.raises(ValueError, match="unknown population"):
        ln.spouse_gap_sensitivity([rows], ev, population="annotated", n_resamples=200)


def test_cross_fitted_folds_join_to_the_plain_answer(ev):
    rows = _test_rows()
    folds = {0: [r for r in rows if r[1]["entity_id"] in ("m0", "f1")],
             1: [r for r in rows if r[1]["entity_id"] in ("m1", "f0")]}
    plain = ln.spouse_gap_sensitivity([rows], ev, n_resamples=200)
    crossfit = ln.spouse_gap_sensitivity([folds], ev, n_resamples=200)
    assert crossfit["folds"] == 2 and plain["folds"] is None
    for k in ("all", "without", "difference"):
        assert crossfit[k]["value"] == pytest.approx(plain[k]["value"])
    overlap = {0: rows, 1: [r for r in rows if r[1]["entity_id"] == "m1"]}
    with pytest.raises(ValueError, match="two folds"):
        ln.spouse_gap_sensitivity([overlap], ev, n_resamples=200)


def test_bad_rows_are_named(ev):
    rows = _test_rows()
    where, row = rows[4]
    no_key = {k: v for k, v in row.items() if k != "sentence_ids"}
    no_key["bag_id"] = "opaque"
    with pytest.raises(ValueError, match=r"preds.jsonl:5: a spouse bag needs"):
        ln.spouse_gap_sensitivity([rows[:4] + [(where, no_key)]], ev, n_resamples=200)
    unknown = {**row, "sentence_ids": ["nope"]}
    with pytest.raises(ValueError, match=r"preds.jsonl:5: sentence id 'nope'"):
        ln.spouse_gap_sensitivity([rows[:4] + [(where, unknown)]], ev, n_resamples=200)
    other = [(w, {**r, "entity_id": "m9", "bag_id": "m9|x"} if r["entity_id"] == "m1" else r) for w, r in rows]
    with pytest.raises(ValueError, match="other entities"):
        ln.spouse_gap_sensitivity([rows, other], ev, n_resamples=200)


def test_committed_label_noise_results_are_consistent():
    res = json.loads((ROOT / "results/re_crossfit/label_noise.json").read_text())
    assert res["marriage_words"] == sorted(ln.MARRIAGE_WORDS)
    for lst in res["rates"].values():
        for pop in ("test", "distant"):
            for g in ("male", "female"):
                v = lst[pop][g]
                assert v["rate"] == pytest.approx(v["without_word"] / v["spouse_bags"])
    # the release: one spouse bag per test person (255 men, 268 women)
    assert res["rates"]["marriage_words"]["test"]["male"]["spouse_bags"] == 255
    assert res["rates"]["marriage_words"]["test"]["female"]["spouse_bags"] == 268
    assert (ROOT / "results/re_crossfit/label_noise.md").read_text() == ln.report_document(res).markdown()


@pytest.mark.slow
def test_committed_rates_match_the_embedded_release():
    res = json.loads((ROOT / "results/re_crossfit/label_noise.json").read_text())
    assert ln.rates(ln.spouse_evidence()) == res["rates"]["marriage_words"]


def test_rows_shaped_like_relext_predict_find_their_sentences():
    """Rows carrying the evaluation bags' ``sentence_ids`` (what ``relext.training.predict`` writes) are
    found in the benchmark they came from; a bag that loses its marriage word is dropped."""
    from relext.model.bags import SplitRows, evaluation_bags
    from tests.support.relext_data import tiny_dataset

    ds = tiny_dataset(n_train=4, n_eval=6)
    ev = ln.spouse_evidence(ds)
    rows = []
    for split in ("male_test", "female_test"):
        bags = evaluation_bags(SplitRows.from_dataset(ds[split], split))
        for i, (meta, labels) in enumerate(zip(bags.meta, bags.labels)):
            scores = [0.0] * len(RELATIONS)
            scores[labels[0]] = 1.0                       # a perfect extractor
            rows.append((f"{split}.jsonl:{i + 1}", {"bag_id": f"{split}-{i:06d}", "split": split, **meta,
                                                    "labels": labels, "scores": scores}))
    res = ln.spouse_gap_sensitivity([rows], ev, n_resamples=100)
    assert res["dropped_bags_per_run"] == [{"male": 0, "female": 0}]   # every template has a marriage word
    assert res["all"]["value"] == res["without"]["value"] == 0.0
    # take the marriage words out of one female spouse bag's sentences: that bag is dropped
    target = next(r for _, r in rows if r["gender"] == "female" and SP in r["labels"])
    ev.sentence.update({sid: False for sid in target["sentence_ids"]})
    res = ln.spouse_gap_sensitivity([rows], ev, n_resamples=100)
    assert res["dropped_bags_per_run"] == [{"male": 0, "female": 1}]
