import gzip
import json

import numpy as np
import pytest

from kge.graph import (GraphFormatError, KnowledgeGraph, load_fb13, load_graph, load_graph_dir, load_openke,
                       load_triples_jsonl, load_tsv, save_openke)



def _same(a: KnowledgeGraph, b: KnowledgeGraph) -> None:
    assert a.entities == b.entities and a.relations == b.relations
    for s in ("train", "valid", "test"):
        np.testing.assert_array_equal(a.split(s), b.split(s))


def test_openke_round_trip(tmp_path, tiny_graph):
    save_openke(tiny_graph, tmp_path / "ok")
    g = load_openke(tmp_path / "ok")
    _same(g, tiny_graph)
    # column order on disk is head tail relation
    first = (tmp_path / "ok" / "train2id.txt").read_text().splitlines()[1].split()
    h, r, t = tiny_graph.train[0]
    assert [int(x) for x in first] == [h, t, r]
    assert load_graph(tmp_path / "ok").fingerprint() == tiny_graph.fingerprint()


def test_openke_gzip(tmp_path, tiny_graph):
    save_openke(tiny_graph, tmp_path / "ok")
    for p in (tmp_path / "ok").iterdir():
        with gzip.open(str(p) + ".gz", "wt") as f:
            f.write(p.read_text())
        p.unlink()
    _same(load_openke(tmp_path / "ok"), tiny_graph)


@pytest.mark.parametrize("mutate, message", [
    (lambda lines: ["999"] + lines[1:], "train2id.txt:1: count line says 999"),
    (lambda lines: lines[:3] + ["1 2"] + lines[4:], "train2id.txt:4: expected 'head tail relation'"),
    (lambda lines: lines[:2] + ["1 x 0"] + lines[3:], "train2id.txt:3: non-integer"),
    (lambda lines: lines[:4] + ["0 99999 0"] + lines[5:], "train2id.txt:5: id out of range"),
    (lambda lines: lines[:4] + ["0 1 57"] + lines[5:], "train2id.txt:5: id out of range"),
])
def test_openke_errors_name_file_and_line(tmp_path, tiny_graph, mutate, message):
    save_openke(tiny_graph, tmp_path / "ok")
    p = tmp_path / "ok" / "train2id.txt"
    p.write_text("\n".join(mutate(p.read_text().splitlines())) + "\n")
    with pytest.raises(GraphFormatError, match=message.replace("(", r"\(")):
        load_openke(tmp_path / "ok")


def test_openke_entity_file_errors(tmp_path, tiny_graph):
    save_openke(tiny_graph, tmp_path / "ok")
    p = tmp_path / "ok" / "entity2id.txt"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:3] + ["broken line without id"] + lines[4:]) + "\n")
    with pytest.raises(GraphFormatError, match="entity2id.txt:4"):
        load_openke(tmp_path / "ok")


def _write_tsv(folder, graph):
    folder.mkdir()
    for s in ("train", "valid", "test"):
        (folder / f"{s}.tsv").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in graph.labelled(s)))


def test_tsv_folder(tmp_path, tiny_graph):
    _write_tsv(tmp_path / "tsv", tiny_graph)
    g = load_graph(tmp_path / "tsv")
    assert set(g.labelled("train")) == set(tiny_graph.labelled("train"))
    assert g.labelled("test") == tiny_graph.labelled("test")
    assert sorted(g.relations) == sorted(tiny_graph.relations)


def test_tsv_single_file_and_errors(tmp_path):
    p = tmp_path / "kg.tsv"
    p.write_text("a\tknows\tb\n# comment\n\nb\tknows\tc\n")
    g = load_graph(p)
    assert g.labelled() == [("a", "knows", "b"), ("b", "knows", "c")]
    assert len(g.valid) == 0 and len(g.test) == 0
    p.write_text("a\tknows\tb\nb knows c\n")
    with pytest.raises(GraphFormatError, match=r"kg.tsv:2: expected 'head<TAB>relation<TAB>tail'"):
        load_tsv(p)


def test_graph_dir_round_trip_and_unknown_names(tmp_path, tiny_graph):
    tiny_graph.save(tmp_path / "gd")
    g = load_graph(tmp_path / "gd")
    _same(g, tiny_graph)
    with open(tmp_path / "gd" / "triples" / "test.tsv", "a") as f:
        f.write("p0\tgender\tnobody\n")
    with pytest.raises(GraphFormatError, match=r"test.tsv:\d+: unknown entity 'nobody'"):
        load_graph_dir(tmp_path / "gd")
    tiny_graph.save(tmp_path / "gd2")
    with open(tmp_path / "gd2" / "triples" / "train.tsv", "a") as f:
        f.write("p0\tsibling\tp1\n")
    with pytest.raises(GraphFormatError, match=r"train.tsv:\d+: unknown relation 'sibling'"):
        load_graph_dir(tmp_path / "gd2")


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_triples_jsonl(tmp_path):
    src = {"split": "train", "sentence_ids": [1]}
    p = _jsonl(tmp_path / "triples.jsonl", [
        {"head": "Ada", "relation": "spouse", "tail": "Bob", "score": 0.9, "head_gender": "Female", "source": src},
        {"head": "Ada", "relation": "spouse", "tail": "Bob", "score": 0.8, "head_gender": "female", "source": src},
        {"head": "Ada", "relation": "birthPlace", "tail": "London", "score": 0.3, "head_gender": "female"},
        {"head": "Carl", "relation": "hypernym", "tail": "painter", "score": 0.7, "head_gender": "male"},
    ])
    g = load_graph(p)
    assert sorted(g.labelled()) == sorted([("Ada", "spouse", "Bob"), ("Ada", "birthPlace", "London"),
                                          ("Carl", "hypernym", "painter"), ("Ada", "gender", "female"),
                                          ("Carl", "gender", "male")])
    g = load_triples_jsonl(p, min_score=0.5)
    assert ("Ada", "birthPlace", "London") not in g.labelled()
    assert ("Ada", "gender", "female") in g.labelled()


@pytest.mark.parametrize("line, message", [
    ('{"head": "A", "relation": "r"', "malformed JSON"),
    ('{"head": "A", "relation": "r"}', "field 'tail' missing"),
    ('{"head": "A", "relation": "r", "tail": "B", "score": "high"}', "field 'score' is not a number"),
    ('{"head": "A", "relation": "r", "tail": "B", "head_gender": "x"}', "field 'head_gender' must be"),
])
def test_triples_jsonl_errors(tmp_path, line, message):
    p = tmp_path / "t.jsonl"
    p.write_text('{"head": "A", "relation": "r", "tail": "B"}\n' + line + "\n")
    with pytest.raises(GraphFormatError, match=f"t.jsonl:2: {message}"):
        load_triples_jsonl(p)


def test_lookups_and_validation(tiny_graph, graph_factory):
    assert tiny_graph.relation_id("gender") == 0
    with pytest.raises(KeyError, match="relation 'religion' is not in graph tiny"):
        tiny_graph.relation_id("religion")
    with pytest.raises(ValueError, match="ids out of range"):
        KnowledgeGraph(["a", "b"], ["r"], [[0, 0, 2]])
    with pytest.raises(ValueError, match="shape"):
        KnowledgeGraph(["a", "b"], ["r"], [[0, 0]])
    assert graph_factory(seed=1).fingerprint()["names_sha256"] == tiny_graph.fingerprint()["names_sha256"]


def test_unknown_format(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(GraphFormatError, match="cannot tell the graph format"):
        load_graph(tmp_path / "x")


def test_pykeen_round_trip(tiny_graph):
    pytest.importorskip("pykeen")
    from kge.pykeen_io import from_pykeen, to_pykeen

    f = to_pykeen(tiny_graph)
    assert f["training"].num_entities == tiny_graph.num_entities
    _same(from_pykeen(**f), tiny_graph)


def test_shipped_fb13():
    g = load_fb13()
    assert (g.num_entities, g.num_relations) == (75043, 13)
    assert (len(g.train), len(g.valid), len(g.test)) == (316232, 5908, 23733)
    gender = g.relation_id("gender")
    all_t = g.all_triples()
    tails = all_t[all_t[:, 1] == gender, 2]
    assert (tails == g.entity_id("male")).sum() == 58593
    assert (tails == g.entity_id("female")).sum() == 8070


def test_jsonl_names_with_newlines_or_tabs_become_single_spaces(tmp_path):
    import json

    from kge.graph import load_triples_jsonl

    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps({"head": "Thomas  Courtney", "relation": "spouse",
                             "tail": "Donna Courtney \nNancy\tCourtney", "head_gender": "male"}) + "\n")
    g = load_triples_jsonl(p)
    assert "Donna Courtney Nancy Courtney" in g.entities and "Thomas Courtney" in g.entities
