"""Triples from predictions; new-text input parsing."""
import json

import pytest

from relext.extract import (
    extract_text,
    read_text_file,
    text_dataset,
    tokenize,
    triples_from_predictions,
)

ROWS = [
    {"bag_id": "b1", "split": "male_test", "entity_id": "e1", "head": "Ann", "tail": "Bob", "gender": "female",
     "labels": [1], "scores": [0.1, 0.7, 0.1, 0.05, 0.05], "sentence_ids": ["s1", "s2"]},
    {"bag_id": "b2", "split": "male_test", "entity_id": "e1", "head": "Ann", "tail": "Paris", "gender": "female",
     "labels": [4], "scores": [0.5, 0.0, 0.0, 0.1, 0.4], "sentence_ids": ["s3"]},
    {"bag_id": "b3", "split": "male_test", "entity_id": "e2", "head": "Carl", "tail": "poet", "gender": "male",
     "labels": [2], "scores": [0.05, 0.0, 0.9, 0.0, 0.05], "sentence_ids": ["s4"]},
]


def test_argmax_rule_drops_na_and_sorts():
    t = triples_from_predictions(ROWS)
    assert [(x["head"], x["relation"], x["tail"]) for x in t] == [("Carl", "hypernym", "poet"), ("Ann", "spouse", "Bob")]
    assert t[1] == {"head": "Ann", "relation": "spouse", "tail": "Bob", "score": 0.7, "head_gender": "female",
                    "source": {"split": "male_test", "bag_id": "b1", "sentence_ids": ["s1", "s2"]}}
    assert len(triples_from_predictions(ROWS, min_score=0.8)) == 1


def test_all_rule_uses_min_score_per_relation():
    t = triples_from_predictions(ROWS, rule="all", min_score=0.4)
    assert {(x["tail"], x["relation"]) for x in t} == {("Bob", "spouse"), ("Paris", "birthPlace"), ("poet", "hypernym")}
    with pytest.raises(ValueError, match="unknown extraction rule"):
        triples_from_predictions(ROWS, rule="max")


def test_tokenize_and_locate_new_text():
    toks = tokenize("Marie Curie was born in Warsaw, Poland.")
    assert toks == ["Marie", "Curie", "was", "born", "in", "Warsaw", ",", "Poland", "."]


def test_new_text_mentions_are_located_with_the_benchmark_rules(tmp_path):
    p = write_lines(tmp_path / "t.jsonl", [
        {"head": "Marie Curie", "tail": "Pierre Curie", "text": "In 1895 Curie married Pierre Curie ."},
        {"head": "Marie Curie", "tail": "November 7, 1867", "text": "Curie was born on 7 November 1867 ."},
        {"head": "Marie Curie", "tail": "Paris", "text": "She never saw Warsaw again ."},
    ])
    rows = read_text_file(p)
    assert rows[0]["head_span"] == [2, 3] and rows[0]["tail_span"] == [4, 6]
    assert rows[1]["tail_span"] == [4, 7]
    assert rows[2]["head_span"] == [-1, -1] and rows[2]["tail_span"] == [-1, -1]


def write_lines(path, objs):
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs))
    return path


def test_read_text_file_and_dataset(tmp_path):
    p = write_lines(tmp_path / "t.jsonl", [
        {"head": "Marie Curie", "tail": "Warsaw", "gender": "Female", "text": "Marie Curie was born in Warsaw."},
        {"head": "Marie Curie", "tail": "Warsaw", "tokens": ["She", "left", "Warsaw", "."],
         "head_span": [0, 1]},
    ])
    rows = read_text_file(p)
    assert rows[0]["head_span"] == [0, 2] and rows[0]["tail_span"] == [5, 6] and rows[0]["gender"] == "female"
    assert rows[1]["head_span"] == [0, 1] and rows[1]["tail_span"] == [2, 3] and rows[1]["gender"] is None
    ds = text_dataset(rows)["text"]
    assert len(ds) == 2 and ds.features["relation"].names[0] == "NA"
    assert ds[0]["gender"] == 0 and ds[1]["gender"] == -1


@pytest.mark.parametrize("line,msg", [
    ("[1]", "JSON object"),
    ("{oops", "malformed JSON"),
    (json.dumps({"tail": "x", "text": "a x"}), "'head'"),
    (json.dumps({"head": "a", "tail": "x"}), "'tokens' list or a non-empty 'text'"),
    (json.dumps({"head": "a", "tail": "x", "text": "a x", "gender": "none"}), "'gender'"),
    (json.dumps({"head": "a", "tail": "x", "tokens": ["a", "x"], "tail_span": [1, 5]}), "'tail_span'"),
])
def test_read_text_file_errors(tmp_path, line, msg):
    p = write_lines(tmp_path / "t.jsonl", [{"head": "a", "tail": "x", "text": "a x"}, line])
    with pytest.raises(ValueError, match=msg) as e:
        read_text_file(p)
    assert f"{p}:2" in str(e.value)


def test_extract_text_groups_bags_and_keeps_missing_gender(tmp_path):
    p = write_lines(tmp_path / "t.jsonl", [
        {"head": "Ann", "tail": "Bob", "gender": "female", "text": "Ann married Bob."},
        {"head": "Ann", "tail": "Bob", "gender": "female", "text": "Ann and Bob divorced."},
        {"head": "Carl", "tail": "poet", "text": "Carl was a poet."},
    ])
    seen = {}

    def fake_predict_split(run_dir, split, *, dataset):
        seen["split"], seen["n"] = split, len(dataset[split])
        out = []
        for (h, t) in {(r["head"], r["tail"]) for r in dataset[split]}:
            rel = 1 if t == "Bob" else 2
            scores = [0.0] * 5
            scores[rel] = 0.9
            scores[0] = 0.1
            out.append({"bag_id": h + t, "entity_id": f"text:{h}", "head": h, "tail": t,
                        "gender": "male", "labels": [0], "scores": scores, "sentence_ids": []})
        return out

    triples_from = extract_text(tmp_path, p, predict_split_fn=fake_predict_split)
    assert seen == {"split": "text", "n": 3}
    by_head = {x["head"]: x for x in triples_from}
    assert by_head["Ann"]["relation"] == "spouse" and by_head["Ann"]["head_gender"] == "female"
    assert by_head["Carl"]["head_gender"] is None and by_head["Carl"]["source"]["split"] == "text"
    assert len(triples_from) == 2
