"""Linking a knowledge graph built from WikiGenderBias to FB13 by name (background knowledge)."""
from __future__ import annotations

import unicodedata
from typing import Any

from wgb.pipeline.config import GENDER_RELATION

FB13_RELATION_MAP = {"spouse": "spouse", "birthPlace": "place_of_birth", GENDER_RELATION: "gender"}


def _norm_name(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if not unicodedata.combining(c)).lower()
    s = s.split("(")[0].strip()
    return "_".join("".join(c if c.isalnum() else " " for c in s).split())


def link_to_fb13(graph, fb13) -> tuple[Any, dict[str, Any]]:
    """Merge ``graph`` into FB13 by name: people and places whose normalised name (or, for a
    place, first comma component) is an FB13 entity become that entity; spouse/birthPlace/gender
    are renamed to FB13's relations. Returns the union graph and a link report."""
    import numpy as np

    from kge.graph import KnowledgeGraph

    fb_index = {n: i for i, n in enumerate(fb13.entities)}
    fb_rel = {n: i for i, n in enumerate(fb13.relations)}
    ent_map: dict[int, int] = {}
    names = list(fb13.entities)
    linked = {"people": 0, "places": 0, "other": 0}
    heads = set(graph.train[:, 0].tolist())
    if "spouse" in graph.relations:  # spouses are people too
        heads |= set(graph.train[graph.train[:, 1] == graph.relations.index("spouse"), 2].tolist())
    place_rel = graph.relations.index("birthPlace") if "birthPlace" in graph.relations else -1
    places = set(graph.train[graph.train[:, 1] == place_rel, 2].tolist()) if place_rel >= 0 else set()
    for i, name in enumerate(graph.entities):
        key = _norm_name(name)
        cand = fb_index.get(key)
        if cand is None and i in places and "," in name:
            cand = fb_index.get(_norm_name(name.split(",")[0]))
        if cand is not None and (i in heads or i in places or name in ("male", "female")):
            ent_map[i] = cand
            linked["people" if i in heads else "places" if i in places else "other"] += 1
        else:
            ent_map[i] = len(names)
            names.append(f"wgb:{name}")
    rel_names = list(fb13.relations)
    rel_map = {}
    for j, r in enumerate(graph.relations):
        target = FB13_RELATION_MAP.get(r)
        if target in fb_rel:
            rel_map[j] = fb_rel[target]
        else:
            rel_map[j] = len(rel_names)
            rel_names.append(r)
    t = graph.train
    mapped = np.stack([np.vectorize(ent_map.get)(t[:, 0]), np.vectorize(rel_map.get)(t[:, 1]),
                       np.vectorize(ent_map.get)(t[:, 2])], axis=1).astype(np.int64)
    union = KnowledgeGraph(names, rel_names, np.concatenate([fb13.train, mapped]), fb13.valid, fb13.test,
                           name=f"{graph.name}+fb13")
    report = {"entities": len(graph.entities), "linked": linked, "linked_total": sum(linked.values()),
              "relation_map": {graph.relations[j]: rel_names[k] for j, k in rel_map.items()}}
    return union, report
