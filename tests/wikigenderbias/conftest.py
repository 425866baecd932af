"""Fixtures of the wikigenderbias tests: the embedded benchmark (loaded once) and a tiny one."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def embedded():
    import wikigenderbias

    return wikigenderbias.load("sentences")


@pytest.fixture(scope="session")
def embedded_entities():
    import wikigenderbias

    return wikigenderbias.load("entities")


def tiny_entities() -> dict[str, list[dict]]:
    """Four splits of hand-written entity records (real-looking sentences, known answers)."""
    def ent(eid, name, gender, spouse, sent_spouse, place, sent_place):
        return {
            "entity_id": eid, "entity": name, "gender": gender,
            "relations": [
                {"relation": "spouse", "tail": spouse, "sentences": sent_spouse},
                {"relation": "birthPlace", "tail": place, "sentences": sent_place},
                {"relation": "birthDate", "tail": "November 2, 1924",
                 "sentences": [f"{name.split()[-1]} was born on 2 November 1924 ."]},
                {"relation": "hypernym", "tail": "Actress" if gender == "female" else "Actor",
                 "sentences": [f"{name} was an American {'actress' if gender == 'female' else 'actor'} ."]},
                {"relation": "NA", "tail": "", "sentences": []},
            ],
        }

    return {
        "train": [
            ent("t-0", "Jane Roe", "female", "John Roe", ["Roe married John Roe in 1950 .", "Jane met John Roe ."],
                "Piqua, Kansas", ["Roe was born in Piqua , Kansas ."]),
            ent("t-1", "Max Mustermann", "male", "Erika Mustermann", ["Mustermann married Erika Mustermann ."],
                "Berlin", ["Max Mustermann grew up in Berlin ."]),
        ],
        "validation": [ent("v-0", "Ann Lee", "female", "Bo Lee", ["Ann Lee and Bo Lee wed ."], "Ohio", ["Lee left Ohio ."])],
        "male_test": [ent("m-0", "Tom Kay", "male", "Sue Kay", ["Kay divorced Sue Kay ."], "Leeds", ["Kay was born in Leeds ."])],
        "female_test": [ent("f-0", "Eve Fox", "female", "Al Fox", ["Fox married Al Fox ."], "Rome", ["Fox lived in Rome ."])],
    }


@pytest.fixture()
def tiny_records():
    """A function returning fresh tiny entity records (tests may mutate them)."""
    return tiny_entities


@pytest.fixture()
def tiny_folder(tmp_path):
    from wikigenderbias.export import write_benchmark

    return write_benchmark(tmp_path / "tiny", tiny_entities(), description="A tiny test benchmark.",
                           report={"source": "test"}, progress=False)
