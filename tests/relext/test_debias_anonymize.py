"""Name anonymization: labels per article, span recomputation, NER backends, cache."""
from __future__ import annotations

import pytest
from support.debias_data import tiny_dsdict

from relext.debias import spacy_pipeline
from relext.debias.anonymize import Anonymize, GazetteerNER, _merge, replace_spans


def _valid_spans(row):
    n = len(row["tokens"])
    for key in ("head_span", "tail_span"):
        s, e = row[key]
        assert (s, e) == (-1, -1) or 0 <= s < e <= n, (key, row)


def test_replace_spans_collapses_names_and_maps_positions():
    toks = "In 1960 John Smith told Alice Brown about it .".split()
    new, pos = replace_spans(toks, [(2, 4, "E1"), (5, 7, "E2")])
    assert new == "In 1960 E1 told E2 about it .".split()
    assert pos == [0, 1, 2, 2, 3, 4, 4, 5, 6, 7]


def test_merge_prefers_stronger_evidence_and_joins_neighbours():
    # NER says "John Doe" (a new person, prio 3); "John" alone matches the head's name word (prio 4)
    assert _merge([(0, 1, "E1", 4), (0, 2, "E3", 3)]) == [(0, 2, "E3")]
    # two name words of the same person next to each other become one mention
    assert _merge([(0, 1, "E1", 4), (1, 2, "E1", 4)]) == [(0, 2, "E1")]
    assert _merge([(0, 1, "E1", 4), (1, 2, "E2", 4)]) == [(0, 1, "E1"), (1, 2, "E2")]


@pytest.fixture(scope="module")
def gazetteer_out():
    an = Anonymize(ner="gazetteer")
    ds = tiny_dsdict()
    return ds, an.transform_dataset(ds), an


def test_every_split_is_anonymized_with_same_features(gazetteer_out):
    ds, out, _ = gazetteer_out
    assert list(out) == list(ds)
    for split in ds:
        assert out[split].features == ds[split].features
        assert len(out[split]) == len(ds[split])
        assert out[split]["id"] == ds[split]["id"]
        assert set(out[split]["head"]) == {"E1"}
        for r in out[split]:
            _valid_spans(r)


def test_spans_are_recomputed_after_multi_token_names(gazetteer_out):
    _, out, _ = gazetteer_out
    rows = out["train"].to_list()
    spouse = rows[0]
    assert spouse["tokens"][:4] == ["E1", "married", "E2", "in"]
    assert spouse["head_span"] == [0, 1] and spouse["tail_span"] == [2, 3]
    assert spouse["tail"] == "E2"
    na = rows[3]
    assert na["tokens"][:4] == ["In", "1960", "E1", "told"] and na["head_span"] == [2, 3]
    for r in rows:
        for key, name in (("head_span", "head"), ("tail_span", "tail")):
            s, e = r[key]
            if s >= 0 and r[name].startswith("E") and r[name][1:].isdigit():
                assert r["tokens"][s:e] == [r[name]]


def test_labels_are_consistent_within_an_article_and_restart_per_article(gazetteer_out):
    _, out, _ = gazetteer_out
    rows = out["train"].to_list()
    first, second = rows[:4], rows[4:]
    # the head's surname alone is the head; the spouse's first name alone is the spouse
    assert first[1]["tokens"][0] == "E1"
    assert first[2]["tokens"][-2] == "E2"
    assert "Mary" not in sum((r["tokens"] for r in first), [])
    assert second[0]["tokens"][:3] == ["E1", "married", "E2"]


def test_place_tails_are_never_replaced(gazetteer_out):
    _, out, _ = gazetteer_out
    rows = out["train"].to_list()
    born = rows[2]
    assert born["tail"] == "Georgia" and born["tokens"][born["tail_span"][0]] == "Georgia"
    hyper = rows[1]
    assert hyper["tokens"][hyper["tail_span"][0]] == "politician"


def test_describe_records_the_backend(gazetteer_out):
    _, _, an = gazetteer_out
    d = an.describe()
    # 5 heads (every split) + 2 spouse tails of the training split; test labels are never read
    assert d["ner_backend"]["kind"] == "gazetteer" and d["ner_backend"]["n_names"] == 7
    assert d["label_blind"] is True
    assert d["stats"]["train"]["articles"] == 2 and d["stats"]["train"]["rows"] == 8


def test_gazetteer_longest_match():
    ner = GazetteerNER(["John Smith", "John", "Anna Lee (singer)"])
    assert ner.annotate([["John", "Smith", "met", "Anna", "Lee", "and", "John"]]) == [
        [[0, 2, "PERSON"], [3, 5, "PERSON"], [6, 7, "PERSON"]]
    ]


def test_auto_falls_back_to_the_gazetteer_with_a_warning(monkeypatch):
    monkeypatch.setattr(spacy_pipeline, "installed_models", lambda: [])
    an = Anonymize()
    with pytest.warns(UserWarning, match="no English spaCy pipeline"):
        an.transform_dataset(tiny_dsdict())
    assert an.describe()["ner_backend"]["kind"] == "gazetteer"


def test_unknown_ner_is_refused():
    with pytest.raises(ValueError, match="unknown NER 'flair'"):
        Anonymize(ner="flair")


def test_spacy_without_model_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(spacy_pipeline, "installed_models", lambda: [])
    with pytest.raises(RuntimeError, match="no English spaCy pipeline"):
        spacy_pipeline.SpacyAnnotator(task="ner")


def test_spacy_ner_is_cached_and_recorded(tmp_path):
    if not spacy_pipeline.installed_models():
        pytest.skip("no English spaCy pipeline installed (pip install 'wgb[ner]')")
    ds = tiny_dsdict()
    an = Anonymize(ner="spacy", cache_dir=str(tmp_path))
    out = an.transform_dataset(ds)
    d = an.describe()["ner_backend"]
    assert d["kind"] == "spacy" and d["version"] and d["run"]["annotated"] > 0
    rows = out["train"].to_list()
    # "Alice Brown" is nobody the dataset knows: the NER makes her a new person of the article
    assert rows[3]["tokens"][:7] == ["In", "1960", "E1", "told", "his", "friend", rows[3]["tokens"][6]]
    assert rows[3]["tokens"][6] not in ("E1", "E2", "Alice") and rows[3]["tokens"][6].startswith("E")
    assert "Brown" not in rows[3]["tokens"]
    for split in out:
        for r in out[split]:
            _valid_spans(r)
    from relext.debias import anonymize

    anonymize._MEMO._items.clear()  # the in-process memo would answer before the disk cache
    again = Anonymize(ner="spacy", cache_dir=str(tmp_path))
    out2 = again.transform_dataset(ds)
    run = again.describe()["ner_backend"]["run"]
    assert run["annotated"] == 0 and run["cached"] == run["sentences"]
    assert out2["train"].to_list() == rows


def test_names_drop_territories_and_protected_tails_are_trimmed_out_of_mentions():
    from relext.debias.anonymize import clean_name
    from support.debias_data import row
    from datasets import Dataset, DatasetDict
    from wikigenderbias.schema import sentence_features

    assert clean_name("Princess Dorothea of Saxe-Coburg and Gotha") == ["Princess", "Dorothea"]
    assert clean_name("Anna Lee (singer), Jr.") == ["Anna", "Lee"]
    text = "Princess Dorothea Maria was a princess of Gotha ."
    r = row("train", "p", 0, "Princess Dorothea of Saxe-Coburg and Gotha", "Princess", "hypernym",
            "female", text, (1, 2), (0, 1))
    ds = DatasetDict({"train": Dataset.from_list([r], features=sentence_features())})
    out = Anonymize(ner="gazetteer").transform_dataset(ds)["train"][0]
    # the gazetteer finds nothing (the full name never occurs); the head span and the head's
    # name word "Dorothea" become E1; "Princess" (the tail) and "Gotha" (a territory) stay
    assert out["tokens"] == "Princess E1 Maria was a princess of Gotha .".split()
    assert out["tail_span"] == [0, 1] and out["head_span"] == [1, 2] and out["tail"] == "Princess"


def test_an_ner_mention_around_the_head_span_is_the_head(monkeypatch):
    from datasets import Dataset, DatasetDict

    from support.debias_data import row
    from wikigenderbias.schema import sentence_features

    class FakeNER:
        def describe(self):
            return {"kind": "fake"}

        def annotate(self, token_lists):
            # "Princess Dorothea Maria" and "Otto Berg" are persons
            return [[[0, 3, "PERSON"], [6, 8, "PERSON"]] for _ in token_lists]

    text = "Princess Dorothea Maria married in 1898 Otto Berg ."
    r = row("train", "p", 0, "Princess Dorothea of Gotha", "Princess", "hypernym", "female", text, (1, 2), (0, 1))
    ds = DatasetDict({"train": Dataset.from_list([r], features=sentence_features())})
    an = Anonymize(ner="gazetteer")
    monkeypatch.setattr(an, "_backend", lambda names: FakeNER())
    out = an.transform_dataset(ds)["train"][0]
    # the tail "Princess" is protected; the rest of the mention is the head; Otto Berg is new
    assert out["tokens"] == "Princess E1 married in 1898 E2 .".split()
    assert out["head_span"] == [1, 2] and out["tail_span"] == [0, 1]


def test_a_head_span_on_a_territory_is_not_the_head():
    from datasets import Dataset, DatasetDict

    from support.debias_data import row
    from wikigenderbias.schema import sentence_features

    text = "She was the daughter of Prince Philipp of Gotha ."
    r = row("train", "p", 0, "Princess Dorothea of Gotha", "Princess", "hypernym", "female", text, (8, 9), (-1, -1))
    ds = DatasetDict({"train": Dataset.from_list([r], features=sentence_features())})
    an = Anonymize(ner="gazetteer")
    out = an.transform_dataset(ds)["train"][0]
    assert out["tokens"] == text.split() and out["head_span"] == [8, 9]
    assert an.describe()["stats"]["train"]["head_span_untrusted"] == 1


# --------------------------------------------------------------------------------------------
# Label blindness: the anonymized text never depends on the relation labels
# --------------------------------------------------------------------------------------------
def _scrambled(ds, splits, seed=0):
    from support.debias_data import scrambled_labels

    return scrambled_labels(ds, splits, seed)


_VIEW = ("tokens", "text", "head", "tail", "head_span", "tail_span")


def _view(ds, split):
    return [tuple(str(r[c]) for c in _VIEW) for r in ds[split]]


@pytest.mark.parametrize("splits", [("male_test", "female_test"), ("validation", "male_test", "female_test")])
def test_scrambling_test_labels_leaves_anonymization_unchanged(splits):
    ds = tiny_dsdict()
    scr = _scrambled(ds, splits)
    assert all(a != b for s in splits for a, b in zip(ds[s]["relation"], scr[s]["relation"]))
    a = Anonymize(ner="gazetteer", progress=False).transform_dataset(ds)
    b = Anonymize(ner="gazetteer", progress=False).transform_dataset(scr)
    for split in ds:
        assert _view(a, split) == _view(b, split), split


def test_tail_person_is_decided_from_text_not_label():
    from relext.debias.anonymize import tail_is_person

    row = {"tokens": "Carl married Lucy Black in 1950 .".split(), "tail": "Lucy Black",
           "tail_span": [2, 4], "relation": 0}
    # an NER PERSON mention over the tail span makes it a person, whatever the label says
    assert tail_is_person(row, [[2, 4, "PERSON"]], frozenset())
    assert tail_is_person({**row, "relation": 3}, [[2, 4, "PERSON"]], frozenset())
    # a known name (a head, or a training spouse tail) too; otherwise it is not a person
    assert tail_is_person(row, [], frozenset({("Lucy", "Black")}))
    assert not tail_is_person(row, [[0, 1, "PERSON"]], frozenset())
    place = {"tokens": "born in Georgia .".split(), "tail": "Georgia", "tail_span": [2, 3], "relation": 1}
    assert not tail_is_person(place, [], frozenset({("Lucy", "Black")}))


def test_place_tail_with_a_person_label_is_still_protected():
    """Relabelling a birthPlace row as spouse must not anonymize the place (the old leak)."""
    ds = tiny_dsdict()
    rel = ds["male_test"].features["relation"].names
    sp = rel.index("spouse")
    relabelled = [sp] * len(ds["male_test"])
    from datasets import DatasetDict

    ds2 = DatasetDict({**ds, "male_test": ds["male_test"].remove_columns("relation")
                       .add_column("relation", relabelled).cast(ds["male_test"].features)})
    out = Anonymize(ner="gazetteer", progress=False).transform_dataset(ds2)
    born = out["male_test"][2]
    assert "Georgia" in born["tokens"] and born["tail"] == "Georgia"


def test_a_tail_found_in_one_sentence_is_a_person_in_all_of_its_pair():
    """One (head, tail) pair stays one bag: when the NER finds the spouse in one sentence only,
    its other sentences still replace it with the same label (version 1 left it there, and the
    pair became two bags)."""
    from datasets import Dataset, DatasetDict

    from support.debias_data import row
    from wikigenderbias.schema import sentence_features

    class FakeNER:  # finds "Lucy Black" in the first sentence only
        def describe(self):
            return {"kind": "fake"}

        def annotate(self, token_lists):
            return [[[2, 4, "PERSON"]] if toks[2:4] == ["Lucy", "Black"] and toks[0] == "Carl" else []
                    for toks in token_lists]

    rows = [row("male_test", "p", 0, "Carl Smith", "Lucy Black", "spouse", "male",
                "Carl married Lucy Black in 1950 .", (0, 1), (2, 4)),
            row("male_test", "p", 1, "Carl Smith", "Lucy Black", "spouse", "male",
                "He and Lucy Black had two sons .", (0, 1), (2, 4)),
            row("male_test", "p", 2, "Carl Smith", "Berlin", "birthPlace", "male",
                "He was born in Berlin .", (0, 1), (4, 5))]
    ds = DatasetDict({"male_test": Dataset.from_list(rows, features=sentence_features())})
    an = Anonymize(ner="gazetteer", progress=False)
    an._backend = lambda names: FakeNER()
    out = an.transform_dataset(ds)["male_test"]
    assert out["tail"] == ["E2", "E2", "Berlin"]           # one pair, one tail, one bag
    assert out[1]["tokens"] == "He and E2 had two sons .".split() and out[1]["tail_span"] == [2, 3]
    assert an.describe()["version"] == 2
    # still label-blind: the same with every label scrambled
    scr = _scrambled(ds, ("male_test",))
    an2 = Anonymize(ner="gazetteer", progress=False)
    an2._backend = lambda names: FakeNER()
    assert _view(an2.transform_dataset(scr), "male_test") == _view(an.transform_dataset(ds), "male_test")


def test_a_place_the_ner_takes_for_a_person_in_a_minority_of_rows_stays_a_place():
    from datasets import Dataset, DatasetDict

    from support.debias_data import row
    from wikigenderbias.schema import sentence_features

    class FakeNER:  # "Israel" as a PERSON in the first sentence only
        def describe(self):
            return {"kind": "fake"}

        def annotate(self, token_lists):
            return [[[3, 4, "PERSON"]] if toks[0] == "Ruth" else [] for toks in token_lists]

    texts = ["Ruth Cohen met Israel in 1950 .", "Cohen was born in Israel .", "Cohen left Israel in 1970 ."]
    spans = [(3, 4), (4, 5), (2, 3)]
    rows = [row("female_test", "p", k, "Ruth Cohen", "Israel", "birthPlace", "female", t, (0, 2) if k == 0 else (0, 1), sp)
            for k, (t, sp) in enumerate(zip(texts, spans))]
    ds = DatasetDict({"female_test": Dataset.from_list(rows, features=sentence_features())})
    an = Anonymize(ner="gazetteer", progress=False)
    an._backend = lambda names: FakeNER()
    out = an.transform_dataset(ds)["female_test"]
    assert out["tail"] == ["Israel"] * 3                    # one in three rows is not half
    assert out["text"] == ["E1 met Israel in 1950 .", "E1 was born in Israel .", "E1 left Israel in 1970 ."]


def test_two_tails_read_alike_stay_two_pairs():
    """"Guelph" (hypernym) and "Guelph, Ontario" (birthPlace) read alike without the comma suffix;
    taken for persons they get two labels, so two gold pairs never become one bag."""
    from datasets import Dataset, DatasetDict

    from support.debias_data import row
    from wikigenderbias.schema import sentence_features

    class FakeNER:
        def describe(self):
            return {"kind": "fake"}

        def annotate(self, token_lists):
            return [[[3, 4, "PERSON"]] for _ in token_lists]

    rows = [row("male_test", "p", 0, "Ann Small", "Guelph", "hypernym", "male", "Small was a Guelph man .", (0, 1), (3, 4)),
            row("male_test", "p", 1, "Ann Small", "Guelph, Ontario", "birthPlace", "male",
                "Small born in Guelph , Ontario .", (0, 1), (3, 6))]
    ds = DatasetDict({"male_test": Dataset.from_list(rows, features=sentence_features())})
    an = Anonymize(ner="gazetteer", progress=False)
    an._backend = lambda names: FakeNER()
    out = an.transform_dataset(ds)["male_test"]
    assert len(set(out["tail"])) == 2
