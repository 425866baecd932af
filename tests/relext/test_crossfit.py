"""Person-level cross-fitting: fold construction (person-disjoint, stratified, deterministic), fold
views, the label-scramble rule on held-out folds, and fold runs end to end (tiny data)."""
from __future__ import annotations

import numpy as np
import pytest
from datasets import Dataset, DatasetDict

from relext.protocols.crossfit import FoldPlan, FoldSpec, fold_view, parse_protocol, persons
from support.debias_data import scrambled_labels
from support.relext_data import tiny_dataset
from wikigenderbias.schema import SPLITS


def _big(n_train=60, n_eval=12, seed=0):
    return tiny_dataset(n_train=n_train, n_eval=n_eval, seed=seed)


def _ids(ds) -> set[str]:
    return set(ds["entity_id"])


def test_folds_are_person_disjoint_and_cover_everyone():
    ds = _big()
    plan = FoldPlan.of(ds, FoldSpec(folds=5))
    everyone = set().union(*(_ids(ds[s]) for s in SPLITS))
    assert set(plan.persons.entity_id.tolist()) == everyone
    held = [set(plan.persons.entity_id[plan.fold == k].tolist()) for k in range(5)]
    assert set().union(*held) == everyone
    assert sum(len(h) for h in held) == len(everyone)      # each person in exactly one fold


def test_folds_are_stratified_by_gender_and_split():
    ds = _big(n_train=83, n_eval=17)
    plan = FoldPlan.of(ds, FoldSpec(folds=4))
    p = plan.persons
    sizes = np.bincount(plan.fold, minlength=4)
    assert sizes.max() - sizes.min() <= 1
    for g in ("male", "female"):
        for s in SPLITS:
            m = (p.gender == g) & (p.split == s)
            if m.sum():
                c = np.bincount(plan.fold[m], minlength=4)
                assert c.max() - c.min() <= 1, (g, s, c)
    # the annotated test persons are a population of their own
    assert set(p.population[np.isin(p.split, ["male_test", "female_test"])]) == {"test"}
    assert set(p.population[np.isin(p.split, ["train", "validation"])]) == {"distant"}


def test_folds_are_deterministic_and_follow_the_fold_seed():
    ds = _big()
    a = FoldPlan.of(ds, FoldSpec(folds=5, fold_seed=0))
    b = FoldPlan.of(ds, FoldSpec(folds=5, fold_seed=0))
    c = FoldPlan.of(ds, FoldSpec(folds=5, fold_seed=1))
    assert np.array_equal(a.fold, b.fold) and a.fingerprint() == b.fingerprint()
    assert not np.array_equal(a.fold, c.fold) and a.fingerprint() != c.fingerprint()
    # the order of rows in the dataset does not change the plan
    shuffled = DatasetDict({s: d.shuffle(seed=3) for s, d in ds.items()})
    assert np.array_equal(FoldPlan.of(shuffled, FoldSpec(folds=5)).fold, a.fold)


@pytest.mark.parametrize("k", [0, 2, 4])
def test_fold_view_holds_out_fold_k_and_carves_validation_from_the_rest(k):
    ds = _big()
    spec = FoldSpec(folds=5, val_fraction=0.2)
    plan = FoldPlan.of(ds, spec)
    view = fold_view(ds, k, spec)
    held = set(plan.persons.entity_id[plan.fold == k].tolist())
    test = _ids(view["male_test"]) | _ids(view["female_test"])
    assert test == held
    assert not (_ids(view["train"]) & held) and not (_ids(view["validation"]) & held)
    assert not (_ids(view["train"]) & _ids(view["validation"]))       # person-disjoint selection slice
    assert _ids(view["train"]) | _ids(view["validation"]) | test == set(plan.persons.entity_id.tolist())
    names = view["male_test"].features["gender"].names
    assert {names[g] for g in view["male_test"]["gender"]} == {"male"}
    assert {names[g] for g in view["female_test"]["gender"]} == {"female"}
    # every row of the dataset lands in exactly one split of the view
    assert sum(len(view[s]) for s in SPLITS) == sum(len(ds[s]) for s in SPLITS)


def test_bad_fold_settings_are_refused():
    ds = _big()
    with pytest.raises(ValueError, match="folds must be"):
        FoldSpec(folds=1)
    with pytest.raises(ValueError, match="fold must be in"):
        fold_view(ds, 5, FoldSpec(folds=5))
    with pytest.raises(ValueError, match="--folds applies"):
        parse_protocol("test", 3)
    assert parse_protocol("crossfit", None) == 5 and parse_protocol("test", None) is None


def test_a_person_in_two_splits_is_refused():
    ds = _big()
    male = ds["train"].features["gender"].names.index("male")
    row = next(r for r in ds["train"] if r["gender"] == male)
    dup = Dataset.from_list([{**ds["male_test"][0], "entity_id": row["entity_id"], "id": "dup"}],
                            features=ds["male_test"].features)
    from datasets import concatenate_datasets

    bad = DatasetDict({**ds, "male_test": concatenate_datasets([ds["male_test"], dup])})
    with pytest.raises(ValueError, match="in two splits"):
        persons(bad)


def test_extractor_config_fold_fields():
    from relext.training.train import ExtractorConfig

    base = ExtractorConfig()
    assert "folds" not in base.identity()          # test-protocol runs keep their old identity
    fold = ExtractorConfig(folds=5, fold=2)
    assert fold.validate().identity()["fold"] == 2
    assert base.differences(fold) == [] or "folds" not in base.identity()
    assert "fold" in fold.differences(ExtractorConfig(folds=5, fold=3))
    with pytest.raises(ValueError, match="both 'folds' and 'fold'"):
        ExtractorConfig(folds=5).validate()
    with pytest.raises(ValueError, match="fold must be in"):
        ExtractorConfig(folds=5, fold=7).validate()


# --------------------------------------------------------------------------------------------
# The label-scramble rule on held-out folds
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, 3])
def test_held_out_fold_anonymization_never_reads_its_labels(k):
    """Scrambling the held-out persons' gold relations leaves their anonymized text unchanged."""
    from relext.debias.anonymize import Anonymize

    ds = _big(n_train=30, n_eval=8)
    spec = FoldSpec(folds=4)
    view = fold_view(ds, k, spec)
    scr = scrambled_labels(view, ("male_test", "female_test"))
    assert any(a != b for a, b in zip(view["male_test"]["relation"], scr["male_test"]["relation"]))
    a = Anonymize(ner="gazetteer", progress=False).transform_dataset(view)
    b = Anonymize(ner="gazetteer", progress=False).transform_dataset(scr)
    cols = ("tokens", "text", "head", "tail", "head_span", "tail_span")
    for split in ("male_test", "female_test"):
        assert [tuple(str(r[c]) for c in cols) for r in a[split]] == \
               [tuple(str(r[c]) for c in cols) for r in b[split]], split


def test_cda_changes_only_the_fold_training_part():
    from relext.debias import get_debiaser

    ds = _big(n_train=30, n_eval=8)
    view = fold_view(ds, 1, FoldSpec(folds=4))
    out = get_debiaser("cda").transform_dataset(view, seed=0)
    for split in ("male_test", "female_test"):
        assert out[split]["id"] == view[split]["id"]
        assert out[split]["tokens"] == view[split]["tokens"]
    assert len(out["train"]) > len(view["train"])


# --------------------------------------------------------------------------------------------
# Fold runs end to end: train, predict, evaluate, per-entity counts with fold and population
# --------------------------------------------------------------------------------------------
def test_fold_runs_predict_every_person_once(tmp_path):
    from relext.evaluation.evaluate import evaluate_run
    from relext.evaluation.metrics import read_entity_counts
    from relext.training.train import ExtractorConfig, train

    ds = _big(n_train=24, n_eval=6)
    folds = 3
    seen: dict[str, int] = {}
    for k in range(folds):
        cfg = ExtractorConfig(encoder="cnn", selector="average", epochs=1, hidden=8, word_dim=8,
                              w2v_epochs=1, w2v_min_count=1, batch_size=8, folds=folds, fold=k,
                              cache_dir=str(tmp_path / "w2v"))
        run = train(cfg, tmp_path / f"fold{k}", dataset=ds, progress=False)
        evaluate_run(run, dataset=ds, n_resamples=20)
        z = read_entity_counts(run / "entity_counts.npz")
        assert set(z["fold"].tolist()) == {k}
        for e, pop in zip(z["entity_ids"].tolist(), z["population"].tolist()):
            assert e not in seen
            seen[e] = k
            split = next(s for s in SPLITS if e in set(ds[s]["entity_id"]))
            assert pop == ("test" if split.endswith("_test") else "distant")
    everyone = set().union(*(_ids(ds[s]) for s in SPLITS))
    # every person with an evaluation bag is predicted once, by the model of its own fold
    assert set(seen) <= everyone and len(seen) >= 0.9 * len(everyone)
