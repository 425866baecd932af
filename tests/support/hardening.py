"""Tiny fixtures for the hardening tests (tests/test_hardening_*.py): a knowledge graph, trained
embeddings, a trained relation extractor, and a pickle that would run code when unpickled."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np

_CACHE: dict[str, Path] = {}


def make_graph(num_people: int = 30, seed: int = 0):
    """The tiny graph of the kge tests: people with a gender, a profession correlated with it, a
    nationality and a friend."""
    from kge.graph import KnowledgeGraph

    rng = np.random.default_rng(seed)
    people = [f"p{i}" for i in range(num_people)]
    values = ["male", "female", "nurse", "engineer", "teacher", "usa", "uk"]
    entities = people + values
    relations = ["gender", "profession", "nationality", "friend"]
    eid = {n: i for i, n in enumerate(entities)}
    triples = []
    for i, p in enumerate(people):
        g = "male" if i % 2 == 0 else "female"
        triples.append((eid[p], 0, eid[g]))
        prof = ("engineer" if g == "male" else "nurse") if rng.random() < 0.7 else "teacher"
        triples.append((eid[p], 1, eid[prof]))
        triples.append((eid[p], 2, eid["usa" if rng.random() < 0.6 else "uk"]))
        triples.append((eid[p], 3, eid[people[(i + 1) % num_people]]))
    triples = np.array(triples, dtype=np.int64)
    perm = rng.permutation(len(triples))
    n = max(4, len(triples) // 10)
    return KnowledgeGraph(entities, relations, triples[perm[2 * n:]], triples[perm[n:2 * n]], triples[perm[:n]],
                          name="tiny")


def write_tsv(graph, path: Path, shuffle_seed: int | None = None) -> Path:
    """All triples of ``graph`` as one labelled TSV file (all train), optionally lines shuffled."""
    lines = [f"{h}\t{r}\t{t}\n" for s in ("train", "valid", "test") for h, r, t in graph.labelled(s)]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(lines)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def kge_fixture(root: Path) -> dict[str, Path]:
    """``graph`` (a graph dir), ``graph40`` (a bigger one) and ``emb`` (TransE dim 4, 1 epoch, trained on
    ``graph``), made once per session under ``root`` and copied by callers that change them."""
    if "kge" not in _CACHE:
        import torch

        from kge.train import TrainConfig, train

        torch.set_num_threads(1)
        base = root / "kge-fixture"
        make_graph().save(base / "graph")
        make_graph(num_people=40).save(base / "graph40")
        from kge.graph import load_graph

        train(load_graph(base / "graph"), TrainConfig(dim=4, epochs=1, batch_size=32, evaluate_test=False),
              base / "emb", progress=False)
        _CACHE["kge"] = base
    base = _CACHE["kge"]
    return {"graph": base / "graph", "graph40": base / "graph40", "emb": base / "emb"}


def relext_fixture(root: Path) -> Path:
    """A trained relation-extraction run dir (cnn + attention, 1 epoch, a tiny synthetic benchmark
    saved to disk and named in its config), with predictions written."""
    if "relext" not in _CACHE:
        from relext.training.predict import write_predictions
        from relext.training.train import TrainConfig, train
        from support.relext_data import tiny_dataset

        base = root / "relext-fixture"
        data = base / "data"
        ds = tiny_dataset(n_train=12, n_eval=3)
        ds.save_to_disk(str(data))
        cfg = TrainConfig(encoder="cnn", selector="attention", epochs=1, batch_size=8, word_dim=8, hidden=8,
                          max_length=30, w2v_epochs=1, threads=1, cache_dir=str(base / "w2v"), dataset=str(data))
        run = train(cfg, base / "run", dataset=ds, progress=False)
        write_predictions(run, dataset=ds)
        _CACHE["relext"] = Path(run)
    return _CACHE["relext"]


def copy_run(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


class Exploit:
    """Unpickling this runs ``touch marker`` (what a crafted data file could do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def crafted_torch_file(path: Path, marker: Path, payload_key: str = "model") -> Path:
    """A torch file whose unpickling would create ``marker``."""
    import torch

    torch.save({"config": {}, payload_key: Exploit(marker)}, path)
    return path


def set_json(path: Path, **fields) -> None:
    d = json.loads(path.read_text())
    d.update(fields)
    path.write_text(json.dumps(d))
