"""Knowledge graphs: entity/relation id maps, train/valid/test splits, and their loaders.

A :class:`KnowledgeGraph` holds names and three ``int64`` arrays ``[N, 3]`` of
``(head, relation, tail)`` ids. Loaders (all return a ``KnowledgeGraph``):

- :func:`load_openke` -- OpenKE folder (``entity2id.txt``, ``relation2id.txt``, ``train2id.txt``,
  ``valid2id.txt``, ``test2id.txt``; first line = count, then ``head tail relation`` per line;
  ``.txt.gz`` accepted too). FB13 ships in this format (:func:`load_fb13`).
- :func:`load_tsv` -- labelled triples ``head<TAB>relation<TAB>tail`` in ``train/valid/test``
  files (``.tsv``/``.txt``, optionally gzipped) or one file (all train).
- :func:`load_triples_jsonl` -- the JSON lines written by ``wgb re extract``.
- :func:`load_graph_dir` / :meth:`KnowledgeGraph.save` -- the graph dir format
  (``triples/{train,valid,test}.tsv``, ``entities.tsv``, ``relations.tsv``).
- :func:`from_pykeen` / :func:`to_pykeen` in :mod:`kge.pykeen_io`.

:func:`load_graph` detects the format of a path. Bad input raises :class:`GraphFormatError`
naming the file and line.

This module is the public face: the graph itself lives in :mod:`kge.knowledge_graph`, the
format readers and writers in :mod:`kge.graph_io`; import both from here.
"""
from __future__ import annotations

import os
from pathlib import Path

# the graph and its formats, importable from here (GENDER_RELATION too, as before the split)
from kge.graph_io import (GraphFormatError, find_file, load_graph_dir, load_openke,
                          load_triples_jsonl, load_tsv, save_openke)
from kge.knowledge_graph import SPLITS, KnowledgeGraph

DATA_DIR = Path(__file__).resolve().parent / "data"

__all__ = [
    "KnowledgeGraph", "GraphFormatError", "SPLITS", "load_graph", "load_openke", "load_tsv",
    "load_triples_jsonl", "load_graph_dir", "load_fb13", "save_openke",
]


# ------------------------------------------------------------------------------------------
# FB13 and format detection
# ------------------------------------------------------------------------------------------
def load_fb13() -> KnowledgeGraph:
    """FB13 (Socher et al. 2013; Freebase, CC BY), shipped in ``kge/data/fb13`` (OpenKE format,
    gzipped): 75,043 entities, 13 relations, 316,232 / 5,908 / 23,733 triples."""
    return load_openke(DATA_DIR / "fb13", name="fb13")


def load_graph(path: str | os.PathLike | None = None, min_score: float | None = None) -> KnowledgeGraph:
    """Load a graph, detecting the format: ``None`` or ``"fb13"`` = shipped FB13; a folder with
    ``entity2id.txt`` = OpenKE; with ``triples/`` = graph dir; with ``train.tsv``/``train.txt`` =
    labelled TSV; a ``.jsonl``/``.json``(``.gz``) file = extracted triples; any other file =
    labelled TSV (all train)."""
    if path is None or str(path).lower() == "fb13":
        return load_fb13()
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"graph {p} does not exist")
    if p.is_dir():
        if find_file(p, "entity2id", [".txt"]) is not None:
            return load_openke(p)
        if (p / "triples").is_dir():
            return load_graph_dir(p)
        if find_file(p, "train", [".tsv", ".txt"]) is not None:
            return load_tsv(p)
        raise GraphFormatError(f"{p}: cannot tell the graph format (expected entity2id.txt (OpenKE), "
                               f"triples/ (graph dir) or train.tsv (labelled TSV))")
    suffixes = [s.lower() for s in p.suffixes]
    if ".jsonl" in suffixes or ".json" in suffixes:
        return load_triples_jsonl(p, min_score=min_score)
    return _not_empty(load_tsv(p), p)


def _not_empty(graph: KnowledgeGraph, path: Path) -> KnowledgeGraph:
    if not (len(graph.train) or len(graph.valid) or len(graph.test)):
        raise GraphFormatError(f"{path}: no triples (empty graph file)")
    return graph
