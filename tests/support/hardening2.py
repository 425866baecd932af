"""Inputs of the second bad-input round (tests/test_hardening_round2.py, tests/test_hardening_caches.py):
a tiny benchmark folder, a relation extractor trained on it, and a PyKEEN model folder written
without PyKEEN."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

_CACHE: dict[str, Path] = {}


def tiny_entities() -> dict[str, list[dict]]:
    """Entity records of every split (real-looking sentences), enough to train on."""
    def ent(eid, name, gender, spouse, sent_spouse, place, sent_place):
        return {"entity_id": eid, "entity": name, "gender": gender, "relations": [
            {"relation": "spouse", "tail": spouse, "sentences": sent_spouse},
            {"relation": "birthPlace", "tail": place, "sentences": sent_place},
            {"relation": "hypernym", "tail": "Actress" if gender == "female" else "Actor",
             "sentences": [f"{name} was an American {'actress' if gender == 'female' else 'actor'} ."]},
            {"relation": "NA", "tail": "", "sentences": []}]}

    return {
        "train": [
            ent("t-0", "Jane Roe", "female", "John Roe", ["Jane Roe married John Roe in 1950 ."], "Piqua",
                ["Jane Roe was born in Piqua ."]),
            ent("t-1", "Max Moe", "male", "Erika Moe", ["Max Moe married Erika Moe ."], "Berlin",
                ["Max Moe was born in Berlin ."]),
            ent("t-2", "Ida Cole", "female", "Sam Cole", ["Ida Cole wed Sam Cole ."], "Leeds",
                ["Ida Cole was born in Leeds ."]),
        ],
        "validation": [ent("v-0", "Ann Lee", "female", "Bo Lee", ["Ann Lee and Bo Lee wed ."], "Ohio",
                           ["Ann Lee was born in Ohio ."])],
        "male_test": [ent("m-0", "Tom Kay", "male", "Sue Kay", ["Tom Kay married Sue Kay ."], "York",
                          ["Tom Kay was born in York ."])],
        "female_test": [ent("f-0", "Eve Fox", "female", "Al Fox", ["Eve Fox married Al Fox ."], "Rome",
                            ["Eve Fox was born in Rome ."])],
    }


def bench_folder(root: Path) -> Path:
    """A benchmark folder (``wgb data build``'s layout, with its card and fingerprint), made once."""
    if "bench" not in _CACHE:
        from wikigenderbias.export import write_benchmark

        _CACHE["bench"] = write_benchmark(root / "bench-fixture", tiny_entities(), description="Tiny.",
                                          report={"source": "test"}, progress=False)
    return _CACHE["bench"]


def train_on(folder: Path, run_dir: Path) -> Path:
    """A relext run (cnn + average, 1 epoch) trained on the benchmark ``folder``, named in its
    config, with its predictions written."""
    from relext.training.predict import write_predictions
    from relext.training.train import TrainConfig, train

    cfg = TrainConfig(encoder="cnn", selector="average", epochs=1, batch_size=4, word_dim=8, hidden=8,
                      max_length=20, w2v_epochs=1, threads=1, cache_dir=str(run_dir.parent / "w2v"),
                      dataset=str(folder))
    run = train(cfg, run_dir, progress=False)
    write_predictions(run)
    return Path(run)


def pykeen_folder(emb_dir: Path, out: Path) -> Path:
    """The folder ``kge pykeen import`` reads (``state_dict.pt`` + ``pykeen_model.json`` +
    ``training_triples/`` id maps) for the embeddings in ``emb_dir``, written without PyKEEN."""
    import torch

    from kge.embeddings import load_model
    from kge.pykeen_io import FORMAT, META, STATE, TRIPLES, _write_id_map, state_to_pykeen

    model = load_model(emb_dir)
    cls, kwargs, state = state_to_pykeen(model)
    out.mkdir(parents=True)
    torch.save(state, out / STATE)
    (out / META).write_text(json.dumps({"format": FORMAT, "class": cls, "num_entities": model.num_entities,
                                        "num_relations": model.num_relations, "state_dict": STATE,
                                        "interaction": {"p": kwargs.get("scoring_fct_norm"), "power_norm": False}}))
    (out / TRIPLES).mkdir()
    names = [(emb_dir / f).read_text().split("\n")[:-1] for f in ("entities.tsv", "relations.tsv")]
    _write_id_map(out / TRIPLES / "entity_to_id.tsv.gz", names[0])
    _write_id_map(out / TRIPLES / "relation_to_id.tsv.gz", names[1])
    return out


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
