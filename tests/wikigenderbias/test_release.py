"""The embedded release: sizes, disjoint heads, spans, ClassLabels, load_dataset round trip."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import datasets
import pytest

import wikigenderbias
from wikigenderbias.release import check_folder, data_dir, read_release
from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS
from wikigenderbias.spans import find, name_forms, tail_forms

SHARED_RELEASE = Path(__file__).resolve().parents[3] / "shared" / "data" / "wikigenderbias" / "Wikigender.json.gz"


def test_split_sizes_equal_the_release(embedded, embedded_entities):
    assert {s: embedded_entities[s].num_rows for s in SPLITS} == {
        "train": 4118, "validation": 528, "male_test": 255, "female_test": 268}
    assert {s: embedded[s].num_rows for s in SPLITS} == {
        "train": 36365, "validation": 4560, "male_test": 2320, "female_test": 2284}


def test_head_entities_disjoint_across_splits(embedded_entities):
    heads = {s: set(embedded_entities[s]["entity"]) for s in SPLITS}
    for i, a in enumerate(SPLITS):
        for b in SPLITS[i + 1:]:
            assert not heads[a] & heads[b], (a, b)


def test_test_splits_are_split_by_gender(embedded):
    assert set(embedded["male_test"]["gender"]) == {GENDERS.index("male")}
    assert set(embedded["female_test"]["gender"]) == {GENDERS.index("female")}


def test_classlabels_and_custom_splits_via_load_dataset():
    ds = datasets.load_dataset(str(data_dir()))
    assert list(ds) == list(SPLITS)
    for split in SPLITS:
        feats = ds[split].features
        assert feats["relation"].names == list(RELATIONS)
        assert feats["gender"].names == list(GENDERS)
    ents = datasets.load_dataset(str(data_dir()), "entities")
    assert list(ents) == list(SPLITS) and ents["train"].features["gender"].names == list(GENDERS)


def test_every_span_lies_in_its_tokens_and_matches_a_surface_form(embedded):
    located = 0
    for split in SPLITS:
        ds = embedded[split]
        for row in ds.select_columns(["tokens", "head", "tail", "relation", "head_span", "tail_span",
                                      "head_match", "tail_match"]):
            toks = row["tokens"]
            rel = RELATIONS[row["relation"]]
            for side, forms in (("head", name_forms(row["head"])), ("tail", tail_forms(row["tail"], rel))):
                s, e = row[f"{side}_span"]
                if row[f"{side}_match"] == "none":
                    assert (s, e) == (-1, -1)
                    continue
                assert 0 <= s < e <= len(toks)
                matches = {(m[1], m[2]) for m in find(toks, forms)}
                assert (s, e) in matches, (side, row[side], toks[s:e])
                located += 1
            hs, ts = row["head_span"], row["tail_span"]
            if hs[0] >= 0 and ts[0] >= 0:
                assert hs[1] <= ts[0] or ts[1] <= hs[0], "head and tail overlap"
    assert located > 0.9 * 2 * sum(embedded[s].num_rows for s in SPLITS)


def test_located_span_rates_are_reported_per_relation_and_gender():
    report = json.loads((data_dir() / "report.json").read_text())
    per = report["spans"]["per_relation_gender"]
    assert set(per) == set(RELATIONS)
    total_rows = sum(b["rows"] for g in per.values() for b in g.values())
    assert total_rows == 45529 == report["spans"]["total"]["rows"]
    card = (data_dir() / "README.md").read_text()
    for section in ("## Bias, risks and limitations", "## Personal and sensitive information", "## Licence",
                    "## Citation", "## Known defects", "## How it was built", "configs:"):
        assert section in card


@pytest.mark.skipif(not SHARED_RELEASE.is_file(), reason="the authors' release is not beside this checkout")
def test_entities_config_is_lossless_wrt_the_release(embedded_entities):
    raw = json.load(gzip.open(SHARED_RELEASE, "rt"))
    for rsplit, split in (("train", "train"), ("dev", "validation"), ("male_test", "male_test"),
                          ("female_test", "female_test")):
        ours = embedded_entities[split]
        assert ours.num_rows == len(raw[rsplit])
        for item, row in zip(raw[rsplit], ours):
            assert row["entity"] == item["entity1"]
            assert GENDERS[row["gender"]] == item["gender_of_entity1"].lower()
            assert [r["relation"] for r in row["relations"]] == [r["relation_name"] for r in item["relations"]]
            for ro, ri in zip(row["relations"], item["relations"]):
                assert ro["tail"] == ri["entity2"] and ro["sentences"] == ri["sentences"]
                assert [(p["head"], p["tail"]) for p in ro["positions"]] == [
                    (p["entity1"], p["entity2"]) for p in ri["positions"]]


def test_read_release_errors_name_the_file_and_place(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"train": [\n  {"entity1": "X",,}\n]}')
    with pytest.raises(ValueError, match=r"bad\.json: malformed JSON at line 2"):
        read_release(bad)
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({"train": [{"entity1": "X", "relations": []}], "dev": [], "male_test": [],
                                   "female_test": []}))
    with pytest.raises(ValueError, match=r"missing\.json: train\[0\]: missing field 'gender_of_entity1'"):
        read_release(missing)
    with pytest.raises(FileNotFoundError, match="nope.json"):
        read_release(tmp_path / "nope.json")
    gz = tmp_path / "trunc.json.gz"
    gz.write_bytes(gzip.compress(b'{"train": []}')[:-8])
    with pytest.raises(ValueError, match=r"trunc\.json\.gz"):
        read_release(gz)


def test_missing_or_corrupt_data_file_is_a_clear_error(tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(data_dir(), folder)
    target = folder / "data" / "sentences" / "male_test-00000-of-00001.parquet"
    target.write_bytes(target.read_bytes()[:100])
    with pytest.raises(ValueError, match="male_test-00000-of-00001.parquet: corrupt parquet"):
        wikigenderbias.load(path=folder)
    target.unlink()
    with pytest.raises(FileNotFoundError, match="male_test-00000-of-00001.parquet: data file missing"):
        check_folder(folder)
    with pytest.raises(ValueError, match="unknown configuration 'bags'"):
        wikigenderbias.load("bags")
