"""Annotation round trip: export tasks, import three answers each, relabel, agreement."""
import csv
import json

import pytest
from click.testing import CliRunner

from wikigenderbias.annotate import (
    export_tasks, fleiss_kappa, import_answers, item_id, pairwise_agreement, read_answers,
)
from wikigenderbias.export import write_benchmark
from wikigenderbias.schema import RELATIONS, SOURCES

S_SPOUSE = "In 1835 Ada married William King ."
S_NOISE = "Ada Lovelace and William King met at a party ."
S_DATE = "Ada was born on 10 December 1815 ."
S_POET = "In 1877 Martí married Carmen Zayas Bazán ."


def rel(r, tail, *sents):
    return {"relation": r, "tail": tail, "sentences": list(sents), "positions": []}


ENTITIES = {
    "train": [{"entity_id": "Tom Poe", "entity": "Tom Poe", "gender": "male",
               "relations": [rel("hypernym", "Baker", "Tom Poe was a baker .")]}],
    "validation": [{"entity_id": "Lena Roe", "entity": "Lena Roe", "gender": "female",
                    "relations": [rel("hypernym", "Painter", "Lena Roe was a painter .")]}],
    "female_test": [{"entity_id": "Ada Lovelace", "entity": "Ada Lovelace", "gender": "female", "relations": [
        rel("spouse", "William King", S_SPOUSE, S_NOISE), rel("birthDate", "December 10, 1815", S_DATE),
        rel("NA", "Lord Byron", "Ada was the child of Lord Byron .")]}],
    "male_test": [{"entity_id": "José Martí", "entity": "José Martí", "gender": "male",
                   "relations": [rel("spouse", "Carmen Zayas Bazán", S_POET)]}],
}


@pytest.fixture
def bench(tmp_path):
    return write_benchmark(tmp_path / "bench", ENTITIES, description="test", report={"description": "Tiny."},
                           progress=False)


def test_fleiss_kappa_and_pairwise_agreement():
    ratings = [[True, True, True], [True, True, False], [False, False, False], [True, False, False]]
    assert fleiss_kappa(ratings) == pytest.approx(1 / 3)
    assert pairwise_agreement(ratings) == pytest.approx(2 / 3)
    assert fleiss_kappa([[True, True], [False, False]]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[True, True], [True]])


def test_export_tasks_csv(bench, tmp_path):
    out = tmp_path / "tasks.csv"
    assert export_tasks(bench, out) == 4  # positives of both test splits; NA rows are not asked
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    by_sentence = {r["sentence"]: r for r in rows}
    r = by_sentence[S_SPOUSE]
    assert r["item_id"] == item_id("Ada Lovelace", "spouse", "William King", S_SPOUSE)
    assert r["split"] == "female_test" and r["relation"] == "spouse"
    assert r["question"] == "Does this sentence express that Ada Lovelace and William King are (or were) married?"
    assert r["sentence_marked"] == "In 1835 [[ Ada ]] married << William King >> ."
    assert r["sentence_html"] == "In 1835 <b> Ada </b> married <i> William King </i> ."
    assert export_tasks(bench, tmp_path / "tasks.jsonl") == 4
    first = json.loads((tmp_path / "tasks.jsonl").read_text().splitlines()[0])
    assert set(first) >= {"item_id", "question", "sentence_marked"}


def test_import_relabels_majority_no_and_reports_agreement(bench, tmp_path):
    ids = {s: item_id(h, r, t, s) for h, r, t, s in [
        ("Ada Lovelace", "spouse", "William King", S_SPOUSE), ("Ada Lovelace", "spouse", "William King", S_NOISE),
        ("Ada Lovelace", "birthDate", "December 10, 1815", S_DATE),
        ("José Martí", "spouse", "Carmen Zayas Bazán", S_POET)]}
    # long format, MTurk column names; S_POET gets only two answers -> skipped
    long = tmp_path / "batch.csv"
    with long.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["WorkerId", "Input.item_id", "Answer.answer"])
        for s, answers in [(S_SPOUSE, "yes yes no"), (S_NOISE, "no no yes"), (S_DATE, "yes yes yes"),
                           (S_POET, "yes no")]:
            for k, a in enumerate(answers.split()):
                w.writerow([f"W{k}", ids[s], a])
        w.writerow(["W9", "wgb-unknown", "yes"])
    out = tmp_path / "annotated"
    res = import_answers(bench, [long], out=out, progress=False)
    assert (res.items, res.relabelled_na, res.kept) == (3, 1, 2)
    ratings = [[True, True, False], [False, False, True], [True, True, True]]
    assert res.fleiss_kappa == pytest.approx(fleiss_kappa(ratings))
    assert res.pairwise_agreement == pytest.approx(pairwise_agreement(ratings))
    assert res.skipped["wrong_number_of_answers"]["count"] == 1 and res.skipped["unknown_item"]["count"] == 1
    import datasets
    ds = datasets.load_dataset(str(out), "sentences")
    rows = {(r["text"], RELATIONS[r["relation"]]): SOURCES[r["source"]] for r in ds["female_test"].to_list()}
    assert rows == {(S_SPOUSE, "spouse"): "annotated", (S_NOISE, "NA"): "annotated",
                    (S_DATE, "birthDate"): "annotated", ("Ada was the child of Lord Byron .", "NA"): "distant"}
    male = {(r["text"], RELATIONS[r["relation"]], SOURCES[r["source"]]) for r in ds["male_test"].to_list()}
    assert male == {(S_POET, "spouse", "distant")}
    assert len(ds["train"]) == 1
    report = json.loads((out / "report.json").read_text())
    assert report["annotation"]["items"] == 3 and report["description"] == "Tiny."
    with pytest.raises(FileExistsError):
        import_answers(bench, [long], out=out, progress=False)


def test_wide_format_and_bad_answers(tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text("item_id,answer_1,answer_2,answer_3\nA,yes,no,yes\n")
    assert read_answers([wide]) == {"A": [True, False, True]}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "A", "answer": "yes"}\n{"item_id": "A", "answer": "maybe"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:2: answer 'maybe' is not yes/no"):
        read_answers([bad])


def test_cli_round_trip(bench, tmp_path):
    from wgb.cli import cli

    tasks = tmp_path / "tasks.jsonl"
    r = CliRunner().invoke(cli, ["data", "annotate-export", str(bench), "--out", str(tasks)])
    assert r.exit_code == 0 and "wrote 4 annotation items" in r.output, r.output
    answers = tmp_path / "answers.jsonl"
    with answers.open("w") as fh:
        for line in tasks.read_text().splitlines():
            it = json.loads(line)
            for a in ("no", "no", "yes"):
                fh.write(json.dumps({"item_id": it["item_id"], "answer": a}) + "\n")
    r = CliRunner().invoke(cli, ["data", "annotate-import", str(bench), str(answers), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "items annotated: 4 (4 relabelled NA, 0 kept)" in r.output
