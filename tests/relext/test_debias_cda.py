"""Counterfactual data augmentation: word swaps, names, rows, splits."""
from __future__ import annotations

import random

import pytest
from support.debias_data import tiny_dsdict

from relext.debias import wordlists
from relext.debias.cda import CDA, OBJECT_FOLLOWERS, match_case, pair_first_names


@pytest.fixture(scope="module")
def cda():
    return CDA()


def test_swaps_both_directions_and_keeps_case(cda):
    assert cda.swap_tokens("he and his son".split()) == "she and her daughter".split()
    assert cda.swap_tokens("She met her husband".split()) == "He met his wife".split()
    assert cda.swap_tokens("HE WAS A KING".split()) == "SHE WAS A QUEEN".split()
    assert cda.swap_tokens("Mr. Smith".split()) == "Mrs. Smith".split()
    assert match_case("Mr.", "mrs.") == "Mrs."


def test_her_rule_uses_the_next_token(cda):
    # possessive before a content word, object before punctuation / closed-class words / the end
    assert cda.swap_tokens("her husband".split()) == ["his", "wife"]
    assert cda.swap_tokens("married her in 1950".split()) == "married him in 1950".split()
    assert cda.swap_tokens("with her .".split()) == "with him .".split()
    assert cda.swap_tokens("told her".split()) == "told him".split()
    assert cda.swap_tokens("the book is his .".split()) == "the book is hers .".split()
    assert cda.swap_tokens("hers".split()) == ["his"]


def test_tags_override_the_rule(cda):
    assert cda.swap_tokens(["gave", "her", "flowers"], tags=["VBD", "PRP", "NNS"])[1] == "him"
    assert cda.swap_tokens(["gave", "her", "flowers"])[1] == "his"  # the rule's reading


def test_lowercase_miss_is_a_verb(cda):
    assert cda.swap_tokens("they miss him".split()) == "they miss her".split()
    assert cda.swap_tokens(["Miss", "Smith"]) == ["Sir", "Smith"]


def test_ambiguous_words_take_the_first_listed_pair(cda):
    # the file lists "gentleman lady" before "lord lady", "boy girl" before "guy girl"
    assert cda.swap_word("lady") == "gentleman"
    assert cda.swap_word("girl") == "boy"
    assert cda.swap_word("lord") == "lady"
    assert not cda.roundtrip_safe("lord") and cda.roundtrip_safe("gentleman")


def _neutral_words(cda):
    swapped = set(cda.table.to_female) | set(cda.table.to_male) | {"her", "his", "him", "hers"}
    return [w for w in "the a politician married in 1950 , . was born city and company".split()
            if w not in swapped]


def test_swapping_twice_is_the_identity_for_unambiguous_words(cda):
    rng = random.Random(0)
    words = sorted(set(cda.table.to_female) | set(cda.table.to_male))
    safe = [w for w in words if cda.roundtrip_safe(w)]
    unsafe = [w for w in words if not cda.roundtrip_safe(w)]
    assert len(safe) > 40 and "he" in safe and "she" in safe
    assert set(unsafe) >= {"lord", "guy", "ms"}
    neutral = _neutral_words(cda)
    content = ["husband", "wife", "father", "politician", "city"]
    followers = sorted(w for w in OBJECT_FOLLOWERS if cda.swap_word(w) == w)
    for _ in range(300):
        toks = []
        for _ in range(rng.randint(1, 15)):
            r = rng.random()
            if r < 0.15:  # a possessive in a possessive context
                toks += [rng.choice(["his", "her", "His", "Her"]), rng.choice(content)]
            elif r < 0.25:  # an object in an object context
                toks += [rng.choice(["him", "her", "Him"]), rng.choice(followers)]
            elif r < 0.6:
                w = rng.choice(safe)
                toks.append(rng.choice([w, w[:1].upper() + w[1:], w.upper()]))
            else:
                toks.append(rng.choice(neutral))
        once = cda.swap_tokens(toks)
        assert len(once) == len(toks)
        assert cda.swap_tokens(once) == toks, toks


def test_first_name_pairing_is_a_deterministic_partial_bijection():
    names = wordlists.first_names()
    to_f, to_m = pair_first_names(names["male"], names["female"])
    assert (to_f, to_m) == pair_first_names(reversed(names["male"]), names["female"])
    both = set(names["male"]) & set(names["female"])
    assert not (set(to_f) & both) and not (set(to_m) & both)
    assert all(to_m[f] == m for m, f in to_f.items())  # male -> female -> male is the identity


def test_dataset_augments_train_only(cda):
    """Validation stays un-augmented, so every variant selects its model on the same data."""
    ds = tiny_dsdict()
    out = cda.transform_dataset(ds, seed=0)
    assert list(out) == list(ds)
    for split in ds:
        assert out[split].features == ds[split].features
    assert len(out["train"]) == 2 * len(ds["train"])
    ids = out["train"]["id"]
    assert len(set(ids)) == len(ids)
    for split in ("validation", "male_test", "female_test"):
        assert out[split].to_list() == ds[split].to_list()
    desc = cda.describe()
    assert desc["stats"]["train"] == {"original": 8, "swapped": 8, "swapped_with_changes": 8}


def test_swapped_rows_flip_gender_and_keep_spans(cda):
    ds = tiny_dsdict()
    out = cda.transform_dataset(ds)["train"].to_list()
    n = len(ds["train"])
    for orig, new in zip(out[:n], out[n:]):
        assert new["id"] == orig["id"] + "~cda" and new["entity_id"] == orig["entity_id"] + "~cda"
        assert new["gender"] == 1 - orig["gender"]
        assert len(new["tokens"]) == len(orig["tokens"])
        assert new["head_span"] == orig["head_span"] and new["tail_span"] == orig["tail_span"]
        assert new["text"] == " ".join(new["tokens"])
        s, e = orig["head_span"]
        if s >= 0 and " ".join(orig["tokens"][s:e]) == orig["head"]:
            assert " ".join(new["tokens"][s:e]) == new["head"]
    spouse = out[n]
    assert spouse["tokens"][:2] != ["John", "Smith"] and spouse["tokens"][1] == "Smith"
    assert spouse["head"] == " ".join(spouse["tokens"][:2])
    assert spouse["tail"] == " ".join(spouse["tokens"][3:5])  # the spouse's first name swapped too
    assert "her" in spouse["tokens"] and "husband" in spouse["tokens"]


def test_without_names_only_gendered_words_change():
    cda = CDA(swap_names=False)
    out = cda.transform_dataset(tiny_dsdict())["train"].to_list()
    new = out[len(out) // 2]
    assert new["head"] == "John Smith" and new["tokens"][:2] == ["John", "Smith"]
    assert new["tokens"][-5:] == ["her", "husband", "was", "happy", "."]
    assert new["tail"] == "Mary Jones"


def test_augmenting_twice_is_refused(cda):
    once = cda.transform_dataset(tiny_dsdict())
    with pytest.raises(ValueError, match="augmented twice"):
        CDA().transform_dataset(once)


def test_test_splits_cannot_be_augmented():
    with pytest.raises(ValueError, match="never augments test splits"):
        CDA(splits=("train", "male_test"))
    with pytest.raises(ValueError, match="her_rule"):
        CDA(her_rule="guess")


def test_malformed_swap_pairs_name_the_line():
    from relext.debias.wordlists import parse_swap_pairs

    assert parse_swap_pairs("he \t she\nmr.      ms.\n") == (("he", "she"), ("mr.", "ms."))
    with pytest.raises(ValueError, match="pairs.txt, line 2"):
        parse_swap_pairs("he\tshe\nking queen extra\n", "pairs.txt")


def test_spacy_tagger_resolves_her(tmp_path):
    from relext.debias import spacy_pipeline

    if not spacy_pipeline.installed_models():
        pytest.skip("no English spaCy pipeline installed (pip install 'wgb[ner]')")
    cda = CDA(her_rule="spacy", cache_dir=str(tmp_path))
    ds = tiny_dsdict()
    out = cda.transform_dataset(ds)
    assert cda.describe()["tagger"]["kind"] == "spacy"
    assert list((tmp_path).glob("spacy-tag-*.jsonl"))
    swapped = out["train"].to_list()[len(ds["train"]):]
    assert "his" in swapped[4]["tokens"]  # Jane Doe's "her wife" -> "his husband"


def test_head_and_tail_strings_follow_their_swapped_mentions(cda):
    from datasets import Dataset, DatasetDict

    from support.debias_data import row
    from wikigenderbias.schema import sentence_features

    r = row("train", "p", 0, "Princess Dorothea of Gotha", "Princess", "hypernym", "female",
            "Princess Dorothea was a princess .", (1, 2), (0, 1))
    ds = DatasetDict({"train": Dataset.from_list([r], features=sentence_features())})
    new = CDA(splits=("train",)).transform_dataset(ds)["train"][1]
    assert new["tokens"][0] == "Prince" and new["tokens"][3:5] == ["a", "prince"]
    assert new["tail"] == "Prince" and new["head"].startswith("Prince ")
    assert new["head"].split()[1] == new["tokens"][1] != "Dorothea"


def test_first_names_inside_the_head_span_are_swapped_too(cda):
    from datasets import Dataset, DatasetDict

    from support.debias_data import row
    from wikigenderbias.schema import sentence_features

    r = row("train", "p", 0, "Tom Wise", "politician", "hypernym", "male",
            "Thomas Harold Wise was a politician .", (0, 3), (4, 5))
    ds = DatasetDict({"train": Dataset.from_list([r], features=sentence_features())})
    new = CDA(splits=("train",)).transform_dataset(ds)["train"][1]
    assert new["tokens"][0] == cda.name_to_female["Thomas"] and new["tokens"][2] == "Wise"
    assert new["tokens"][1] == cda.name_to_female.get("Harold", "Harold")
