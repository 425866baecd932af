"""Writing benchmark folders: round trip, validation, atomicity; OpenNRE export; stats."""
from __future__ import annotations

import ast
import json

import datasets
import pytest

import wikigenderbias
from wikigenderbias import export as export_mod
from wikigenderbias.card import render_card
from wikigenderbias.opennre import export_opennre
from wikigenderbias.schema import RELATIONS, SPLITS
from wikigenderbias.stats import compute_stats


def test_written_folder_loads_with_load_dataset(tiny_folder):
    ds = datasets.load_dataset(str(tiny_folder))
    assert list(ds) == list(SPLITS)
    train = ds["train"]
    assert train.num_rows == 9  # 3 + 2 sentences of spouse/birthPlace, 2 x (birthDate + hypernym)
    row = next(r for r in train if r["id"] == "t-0-birthPlace-000")
    assert row["tokens"][slice(*row["tail_span"])] == ["Piqua", ",", "Kansas"]
    assert row["tail_match"] == "full" and RELATIONS[row["relation"]] == "birthPlace"
    assert row["tokens"][slice(*row["head_span"])] == ["Roe"]
    date = next(r for r in train if r["id"] == "t-1-birthDate-000")
    assert date["tokens"][slice(*date["tail_span"])] == ["2", "November", "1924"]
    # the same sentence of the same article gets the same sentence id
    ids = {r["sentence_id"] for r in train if r["entity_id"] == "t-0"}
    assert len(ids) == 5


def test_bad_records_are_rejected_before_anything_is_written(tmp_path, tiny_records):
    tiny_entities = tiny_records
    ents = tiny_entities()
    ents["train"][0]["relations"][0]["relation"] = "sibling"
    with pytest.raises(ValueError, match=r"split 'train', entity #0 \('Jane Roe'\): unknown relation 'sibling'"):
        export_mod.write_benchmark(tmp_path / "x", ents, description="", progress=False)
    ents = tiny_entities()
    del ents["validation"][0]["gender"]
    with pytest.raises(ValueError, match="split 'validation', entity #0: missing field 'gender'"):
        export_mod.write_benchmark(tmp_path / "x", ents, description="", progress=False)
    with pytest.raises(ValueError, match="missing \\['female_test'\\]"):
        export_mod.write_benchmark(tmp_path / "x", {s: [] for s in SPLITS[:3]}, description="", progress=False)
    ents = tiny_entities()
    ents["validation"] = []
    with pytest.raises(ValueError, match="split 'validation' is empty"):
        export_mod.write_benchmark(tmp_path / "x", ents, description="", progress=False)
    assert not (tmp_path / "x").exists()


def test_row_ids_are_unique_when_a_relation_repeats(tiny_records):
    ent = tiny_records()["train"][0]
    ent["relations"] += [{"relation": "NA", "tail": "Yale", "sentences": ["Roe went to Yale ."]},
                         {"relation": "NA", "tail": "Harvard", "sentences": ["Roe taught at Harvard ."]}]
    ids = [r["id"] for r in export_mod.sentence_rows(ent)]
    assert len(ids) == len(set(ids))
    assert "t-0-spouse-000" in ids  # relations listed once keep the short id


def test_an_interrupted_write_leaves_nothing_half_written(tmp_path, monkeypatch, tiny_folder, tiny_records):
    tiny_entities = tiny_records
    calls = {"n": 0}
    real = export_mod._write_parquet

    def flaky(rows, config, path):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        real(rows, config, path)

    monkeypatch.setattr(export_mod, "_write_parquet", flaky)
    with pytest.raises(KeyboardInterrupt):
        export_mod.write_benchmark(tmp_path / "new", tiny_entities(), description="", progress=False)
    assert not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # replacing an existing folder: the old one stays intact when the new write fails
    before = sorted(p.name for p in tiny_folder.rglob("*"))
    calls["n"] = 0
    with pytest.raises(KeyboardInterrupt):
        export_mod.write_benchmark(tiny_folder, tiny_entities(), description="", overwrite=True, progress=False)
    assert sorted(p.name for p in tiny_folder.rglob("*")) == before
    with pytest.raises(FileExistsError):
        export_mod.write_benchmark(tiny_folder, tiny_entities(), description="", progress=False)


def test_opennre_export_reread(tmp_path, tiny_folder):
    ds = wikigenderbias.load(path=tiny_folder)
    manifest = export_opennre(ds, tmp_path / "onre")
    rel2id = json.loads((tmp_path / "onre" / "rel2id.json").read_text())
    assert rel2id == {r: i for i, r in enumerate(RELATIONS)}
    assert json.loads((tmp_path / "onre" / "manifest.json").read_text()) == manifest
    n = 0
    for split in SPLITS:
        lines = (tmp_path / "onre" / manifest["splits"][split]["file"]).read_text().splitlines()
        assert len(lines) == manifest["splits"][split]["sentences"] == ds[split].num_rows
        assert manifest["splits"][split]["skipped_unlocated"] == 0
        for line in lines:
            ex = json.loads(line)
            # OpenNRE 0.1.1 reads each line with eval(): every line must also be a Python literal
            assert ast.literal_eval(line) == ex
            assert set(ex) >= {"token", "h", "t", "relation"}
            assert ex["relation"] in rel2id
            for side in ("h", "t"):
                s, e = ex[side]["pos"]
                assert 0 <= s < e <= len(ex["token"])
                assert {"name", "id", "pos"} <= set(ex[side]) and ex[side]["located"]
            n += 1
    assert n > 0
    with pytest.raises(FileExistsError):
        export_opennre(ds, tmp_path / "onre")


def _with_unlocated(tiny_records):
    """Tiny records plus sentences that mention neither the person nor the tail by name: one of
    the male test person's four positive rows, none of the female test person's."""
    ents = tiny_records()
    ents["male_test"][0]["relations"][0]["sentences"].append("He divorced her in 1960 .")
    ents["train"][0]["relations"][0]["sentences"].append("She married him .")
    return ents


def test_opennre_keeps_unlocated_rows_with_relexts_start_rule(tmp_path, tiny_records):
    folder = export_mod.write_benchmark(tmp_path / "bench", _with_unlocated(tiny_records), description="",
                                        progress=False)
    ds = wikigenderbias.load(path=folder)
    manifest = export_opennre(ds, tmp_path / "onre")
    assert manifest["unlocated"]["policy"] == "start" and manifest["warnings"] == []
    for split in SPLITS:
        m = manifest["splits"][split]
        assert m["sentences"] == m["rows"] == ds[split].num_rows and m["skipped_unlocated"] == 0
        assert all(b["skipped_rate"] == 0.0 for b in m["by_gender"].values())
    assert manifest["splits"]["male_test"]["unlocated_kept"] == 1
    lines = [json.loads(x) for x in (tmp_path / "onre" / "wikigenderbias_male_test.txt").read_text().splitlines()]
    odd = [x for x in lines if not x["h"]["located"]]
    assert len(odd) == 1 and odd[0]["h"]["pos"] == [0, 0] and odd[0]["token"][0] == "He"
    # the exported test rows are the rows relext evaluates on
    assert sorted(x["id"] for x in lines) == sorted(ds["male_test"]["id"])


def test_opennre_skip_reports_drops_per_split_and_gender(tmp_path, tiny_records):
    folder = export_mod.write_benchmark(tmp_path / "bench", _with_unlocated(tiny_records), description="",
                                        progress=False)
    ds = wikigenderbias.load(path=folder)
    with pytest.warns(UserWarning, match="different rates") as caught:
        manifest = export_opennre(ds, tmp_path / "onre", unlocated="skip")
    sp = manifest["splits"]
    assert sp["male_test"]["skipped_unlocated"] == 1 and sp["female_test"]["skipped_unlocated"] == 0
    assert sp["male_test"]["by_gender"] == {"male": {"rows": 5, "sentences": 4, "skipped_unlocated": 1,
                                                     "unlocated_kept": 0, "skipped_rate": 0.2}}
    assert sp["train"]["by_gender"]["female"]["skipped_unlocated"] == 1
    assert sp["train"]["by_gender"]["male"]["skipped_unlocated"] == 0
    assert len(manifest["warnings"]) == 2 == len(caught)
    assert any(w.startswith("train: 1 of") for w in manifest["warnings"])
    assert any(w.startswith("test: 1 of 5 male_test rows dropped (20.0%)") for w in manifest["warnings"])
    assert json.loads((tmp_path / "onre" / "manifest.json").read_text())["warnings"] == manifest["warnings"]
    with pytest.raises(ValueError, match="unknown unlocated policy"):
        export_opennre(ds, tmp_path / "x", unlocated="drop")


def test_stats_on_a_known_benchmark(tiny_folder):
    s = compute_stats(wikigenderbias.load(path=tiny_folder), source="tiny")
    by = {(c["split"], c["gender"], c["relation"]): c for c in s.counts}
    c = by[("train", "female", "spouse")]
    assert (c["entities"], c["sentences"], c["bags"], c["bag_size_max"]) == (1, 2, 1, 2)
    fa = s.further_analysis["per_relation"]["spouse"]
    # female articles: Jane Roe (2 spouse sentences), Ann Lee (1), Eve Fox (1); male: 1 and 1
    assert fa["female"]["articles"] == 3 and fa["male"]["articles"] == 2
    assert fa["female"]["sentences_per_article"]["mean"] == pytest.approx(4 / 3)
    assert fa["male"]["sentences_per_article"]["mean"] == pytest.approx(1.0)
    json.loads(s.to_json())
    assert "| train | female | spouse | 1 | 2 | 1 |" in s.to_markdown()


def test_stream_writer_in_chunks_equals_the_list_writer(tmp_path, monkeypatch, tiny_folder, tiny_records):
    import pyarrow.parquet as pq

    monkeypatch.setattr(export_mod, "CHUNK_ROWS", {"sentences": 2, "entities": 1})
    ents = tiny_records()
    pairs = [(s, e) for s in SPLITS for e in ents[s]]
    pairs.sort(key=lambda p: p[1]["entity_id"])  # interleaved splits, as `wgb data build` streams them
    folder = export_mod.write_benchmark_stream(tmp_path / "s", iter(pairs), description="A tiny test benchmark.",
                                               report={"source": "test"}, progress=False)
    for f in sorted(tiny_folder.rglob("*.parquet")):
        streamed = pq.read_table(folder / f.relative_to(tiny_folder))
        assert streamed.schema.equals(pq.read_table(f).schema, check_metadata=True)
        assert streamed.to_pylist() == pq.read_table(f).to_pylist()
    assert pq.ParquetFile(folder / "data" / "sentences" / "train-00000-of-00001.parquet").num_row_groups == 5
    # the reports differ only by the fingerprint of the (differently chunked) parquet bytes
    streamed_report, list_report = (json.loads((f / "report.json").read_text()) for f in (folder, tiny_folder))
    fp_s, fp_l = streamed_report.pop("fingerprint"), list_report.pop("fingerprint")
    assert streamed_report == list_report
    assert fp_s["sha256"] != fp_l["sha256"]
    assert all(fp_s["configs"][c]["rows"] == fp_l["configs"][c]["rows"] for c in fp_l["configs"])
    for f in (folder, tiny_folder):
        report = json.loads((f / "report.json").read_text())
        assert (f / "README.md").read_text() == render_card(description="A tiny test benchmark.", report=report)
    assert export_mod.read_entities(folder) == {
        s: [export_mod._entity_row(e) for e in es] for s, es in tiny_records().items()}


def test_stream_writer_errors_leave_nothing(tmp_path, tiny_records):
    ents = tiny_records()
    no_val = [(s, e) for s in SPLITS for e in ents[s] if s != "validation"]
    with pytest.raises(ValueError, match="split 'validation' is empty"):
        export_mod.write_benchmark_stream(tmp_path / "x", iter(no_val), description="", progress=False)
    with pytest.raises(ValueError, match="split 'validation' is empty"):  # known beforehand
        export_mod.write_benchmark_stream(tmp_path / "x", iter(no_val), description="", progress=False,
                                          sizes={"train": 2, "validation": 0, "male_test": 1, "female_test": 1})
    bad = tiny_records()["train"][1]
    del bad["relations"][0]["tail"]
    with pytest.raises(ValueError, match=r"split 'train', entity #1 \('Max Mustermann'\), relation #0: missing "):
        export_mod.write_benchmark_stream(tmp_path / "x", iter([("train", ents["train"][0]), ("train", bad)]),
                                          description="", progress=False)
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        export_mod.write_benchmark_stream(tmp_path / "x", iter([("dev", bad)]), description="", progress=False)
    assert list(tmp_path.iterdir()) == []


def test_report_wrappers_equal_the_written_reports(tiny_folder, tiny_records):
    ents = tiny_records()
    rows = {s: [r for e in ents[s] for r in export_mod.sentence_rows(e)] for s in SPLITS}
    report = json.loads((tiny_folder / "report.json").read_text())
    assert json.loads(json.dumps(export_mod.span_report(rows))) == report["spans"]
    assert export_mod.counts_report(ents, rows) == report["counts"]


def test_committed_opennre_manifests_match_the_embedded_release(embedded):
    from pathlib import Path

    import numpy as np

    from wikigenderbias.release import data_dir
    from wikigenderbias.schema import GENDERS

    results = Path(__file__).resolve().parents[2] / "results" / "data_export"
    fp = json.loads((data_dir() / "report.json").read_text())["fingerprint"]["sha256"]
    start = json.loads((results / "opennre_manifest.json").read_text())
    skip = json.loads((results / "opennre_manifest_skip.json").read_text())
    assert start["source"]["fingerprint"] == skip["source"]["fingerprint"] == fp
    assert start["unlocated"]["policy"] == "start" and skip["unlocated"]["policy"] == "skip"
    assert start["warnings"] == [] and len(skip["warnings"]) == 3
    for split in SPLITS:
        ds = embedded[split]
        gender = np.asarray(ds["gender"][:])
        unlocated = (np.asarray(ds["head_span"][:])[:, 0] < 0) | (np.asarray(ds["tail_span"][:])[:, 0] < 0)
        for g, name in enumerate(GENDERS):
            rows = int((gender == g).sum())
            if not rows:
                continue
            assert start["splits"][split]["by_gender"][name]["rows"] == rows
            assert start["splits"][split]["by_gender"][name]["skipped_unlocated"] == 0
            assert skip["splits"][split]["by_gender"][name]["skipped_unlocated"] == int(unlocated[gender == g].sum())
