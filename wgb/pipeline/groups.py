"""`wgb run --groups`: the gender gap per cell of a person-level grouping (gender x birth era,
gender x region, gender x Global North/South) for a run's extractors and the graphs built from them.

**What is per person, and so per cell.** A run's per-person quantities are the extraction's
per-person counts (``entity_counts.npz``: tp, fp, fn per relation; ``extraction:<v>``) and the
graph's per-person counts against the gold graph (``graph:<v>``, :func:`wgb.pipeline.propagation.graph_entity_counts`).
Both go through :func:`relext.evaluation.cell_gaps.cell_report`, as ``wgb re score --groups`` does: persons
resampled within gender x fold x population x cell, the minimum persons of each gender for a
verdict ("too few to estimate" below it), the MDE at the cell's size before the verdict, Holm over
cells x relations, the partial-pooling estimate beside it (model-based), the max - min over the
judged cells with its simultaneous interval. Where a graph's per-person counts equal the
extraction's at every seed (one triple per bag, the usual case; the graph has no NA class), its
table would repeat the extraction's and is left out, said so.

**What is not per person** (:data:`NOT_PER_PERSON`): the kge bias measures score *items* (hypernym
values), each over all persons of a graph, from embeddings trained once per seed on the whole
graph; a per-cell value would be another estimand (the measure recomputed on one cell's persons, or
embeddings retrained per cell), not an aggregate of per-person values, so none is reported.

Identity: the groups settings (columns, era edges, minimum per gender) and the seeds name the
stage (``OUT/stages/groups_<key>.done``) and its folder ``OUT/groups/<key>/`` (its ``config.json``
records them); the seeds' stages never depend on them, so adding ``--groups`` to a finished run
reuses every stage and adds this one (and renders the report again).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from wgb.pipeline.config import check_groups as check  # noqa: F401  (the API's check, importable from here)
from wgb.pipeline.config import inputs_fingerprint

#: Why each kge bias measure has no per-cell value (see the module docstring).
NOT_PER_PERSON = {
    "data": "scores items (hypernym values) from the shares of men and of women holding each; a share is a "
            "statistic of a group of persons, not a per-person value to aggregate by cell",
    "fisher": "scores items by the mean over all persons of a one-step change in the embeddings' score; the "
              "stored result keeps the item means only, and the embeddings are trained once on the whole graph",
    "bourli_projection": "scores items by their embeddings' projection on a gender direction: no person in it",
}
GENERIC_NOT_PER_PERSON = "scores items or clusters of a graph's embeddings, not persons"


def settings_of(opts: Mapping[str, Any] | None) -> dict | None:
    """The plain settings a :class:`~wgb.pipeline.config.PipelineConfig` keeps from
    :func:`wgb.cli_groups.resolve_groups`'s options (None without ``--groups``)."""
    if not opts:
        return None
    return {"columns": list(opts["columns"]), "era_edges": [int(e) for e in opts["eras"].edges],
            "min_per_gender": int(opts["min_per_gender"])}


def key(groups: Mapping[str, Any], seeds: Sequence[int]) -> str:
    """The stage's and the folder's name: ``era-e1850_1900_1950-m30-s0_1_2``."""
    cols = "-".join(groups["columns"])
    edges = "_".join(str(e) for e in groups["era_edges"]) if "era" in groups["columns"] else ""
    name = f"{cols}{'-e' + edges if edges else ''}-m{groups['min_per_gender']}-s{'_'.join(map(str, seeds))}"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def folder(out: Path, groups: Mapping[str, Any], seeds: Sequence[int]) -> Path:
    return Path(out) / "groups" / key(groups, seeds)


def stale(out: Path, groups: Mapping[str, Any], seeds: Sequence[int]) -> bool:
    """Whether the per-cell stage's folder was computed from other seed stages than the folder holds now."""
    import json

    saved = folder(out, groups, seeds) / "config.json"
    if not saved.is_file():
        return False
    return json.loads(saved.read_text()).get("inputs_sha256") != inputs_fingerprint(out, seeds)


def compute(out: Path, cfg, settings: Mapping[str, Any], seeds: Sequence[int], dataset, splits: Sequence[str]) -> dict:
    """The per-cell reports of every extractor (and its graph where it differs) of the seeds' runs
    into ``OUT/groups/<key>/`` (``cells.json``, ``config.json``, the plot ``cells.png``); returns the JSON."""
    from relext.evaluation.cell_gaps import cell_labels, cell_report
    from wgb.pipeline.propagation import MIN_RESAMPLES, build_study, head_entities
    from wgb.pipeline.config import seed_dir
    from wgbcore.atomicio import atomic_write_json
    from wikigenderbias.groups import EraBins

    g = cfg.groups
    variants = cfg.variants()
    study = build_study({s: seed_dir(out, s) for s in seeds}, variants, head_entities(dataset, splits))
    data = study.counts
    eras = EraBins(tuple(g["era_edges"]))
    labels, order = cell_labels(data.entity_ids, g["columns"], eras=eras, dataset=cfg.dataset)
    grouping = " x ".join(g["columns"])
    resamples = max(MIN_RESAMPLES, int(settings["n_resamples"]))   # as the report's own estimates
    reports, same = [], []
    for v in variants:
        for level in ("extraction", "graph"):
            name = f"{level}:{v}"
            # the graph has no NA column (class 0): its cells repeat the extraction's when the rest agree
            if level == "graph" and all(np.array_equal(data.counts[name][s][:, 1:], data.counts[f"extraction:{v}"][s][:, 1:])
                                        for s in seeds):
                same.append(v)
                continue
            rep = cell_report(data, labels, order, variant=name, grouping=grouping,
                              min_per_gender=g["min_per_gender"], n_resamples=resamples, seed=0)
            rep.update(level=level, extractor=v)
            reports.append(rep)
    measures = {m: NOT_PER_PERSON.get(m, GENERIC_NOT_PER_PERSON) for m in cfg.measures}
    result = {"groups": dict(g), "grouping": grouping, "seeds": list(seeds), "era_edges": list(eras.edges),
              "n_resamples": resamples,
              "registered": "exploratory: the run's claims do not name these cells",
              "reports": reports, "graph_same_as_extraction": same, "not_per_person": measures}
    d = folder(out, g, seeds)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_json(d / "config.json", {"groups": dict(g), "seeds": list(seeds),
                                          "inputs_sha256": inputs_fingerprint(out, seeds)})
    from wgb.pipeline.groups_report import plot

    plot(result, d / "cells.png")
    atomic_write_json(d / "cells.json", result)
    return result
