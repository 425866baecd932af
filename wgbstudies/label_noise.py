"""Label-noise sensitivity of the spouse F1 gap (issue #26).

The benchmark's test sentences were checked by three crowd workers each; the rest (train and
validation) is distant supervision: a spouse label says DBpedia knows the marriage, not that a
sentence expresses it. A spouse bag (the sentences of one head / tail pair whose gold relations
include spouse) **none of whose sentences has a marriage word** is a likely noisy positive: no
extractor can read the relation from it.

* :data:`MARRIAGE_WORDS` is the list (the words of a token and of its hyphen / slash compounds,
  lowercased: "then-wife" and "ex-husband" count); :data:`ENGAGEMENT_WORDS` widens it for a
  sensitivity check (an engagement is not a marriage, so they are kept apart).
* :func:`spouse_evidence` reads a benchmark (the embedded release by default) and marks every spouse
  bag, with its gender and population ("test": the annotated male_test / female_test persons,
  "distant": the train / validation persons); :func:`rates` gives the share of bags without a
  marriage word by population and gender.
* :func:`spouse_gap_sensitivity` takes one or more runs' prediction rows (the ``predictions/*.jsonl``
  of :mod:`relext.evaluation.evaluate`, or the ``predicted`` / name forms of :mod:`relext.evaluation.score`; under
  cross-fitting the fold runs' held-out predictions) and returns the spouse F1 gap with and
  without those bags, and their paired difference, with the entity bootstrap of
  :mod:`wgbstats.design` (seeds x entities from 3 runs up; the entity-only interval for 1-2 runs).
  A bag is found by its ``sentence_ids``, else by ``(entity_id, tail)``, else by a ``bag_id`` of
  the form ``<entity_id>|<tail>`` (the tail id of :mod:`wikigenderbias.opennre` exports).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from wikigenderbias.compounds import COMPOUND_SEP
from wikigenderbias.schema import GENDERS, RELATIONS

SPOUSE = RELATIONS.index("spouse")
#: Words that say a marriage (and its end): a spouse bag with none of them is a likely noisy label.
MARRIAGE_WORDS: frozenset[str] = frozenset({
    "marry", "marries", "married", "marrying", "remarry", "remarries", "remarried",
    "marriage", "marriages", "wife", "wives", "husband", "husbands", "spouse", "spouses",
    "wed", "weds", "wedded", "wedding", "weddings", "divorce", "divorces", "divorced", "divorcing",
    "widow", "widows", "widowed", "widower", "widowers", "bride", "brides", "bridegroom",
})
#: The wider list's extra words (engagement, not marriage): a sensitivity check of the rate.
ENGAGEMENT_WORDS: frozenset[str] = frozenset({"engaged", "engagement", "fiance", "fiancee", "fiancé", "fiancée"})
POPULATIONS: dict[str, tuple[str, ...]] = {"test": ("male_test", "female_test"), "distant": ("train", "validation")}


def words_of(tokens: Sequence[str]) -> set[str]:
    """The lowercased tokens and the words of their hyphen / slash / dot compounds."""
    out = set()
    for t in tokens:
        t = t.lower()
        out.add(t)
        out.update(w for w in COMPOUND_SEP.split(t) if w)
    return out


def has_marriage_word(tokens: Sequence[str], words: frozenset[str] = MARRIAGE_WORDS) -> bool:
    return not words_of(tokens).isdisjoint(words)


@dataclass
class SpouseEvidence:
    """Which sentences have a marriage word, and every spouse bag with its gender and population."""

    words: frozenset[str]
    sentence: dict[str, bool]                              # sentence_id -> has a marriage word
    bags: dict[tuple[str, str], dict] = field(default_factory=dict)  # (entity_id, tail) -> bag
    population_of: dict[str, str] = field(default_factory=dict)      # entity_id -> test | distant

    def bag_has_word(self, key: tuple[str, str]) -> bool:
        return self.bags[key]["has_word"]


def spouse_evidence(dataset: Mapping[str, Any] | None = None, *,
                    words: frozenset[str] = MARRIAGE_WORDS) -> SpouseEvidence:
    """Marks the spouse bags of every split of ``dataset`` (default: the embedded release, through
    :func:`relext.protocols.data.load_dataset_dict`); a bag is the sentences of one ``(entity_id, tail)``."""
    if dataset is None:
        from relext.protocols.data import load_dataset_dict

        dataset = load_dataset_dict()
    pop_of_split = {s: p for p, splits in POPULATIONS.items() for s in splits}
    ev = SpouseEvidence(words=frozenset(words), sentence={})
    pairs: dict[tuple[str, str], dict] = {}
    for split in dataset:
        if split not in pop_of_split:
            raise ValueError(f"dataset split {split!r} is not one of {sorted(pop_of_split)}")
        d = dataset[split]
        for col in ("entity_id", "sentence_id", "tail", "relation", "gender", "tokens"):
            if col not in d.column_names:
                raise ValueError(f"dataset split {split!r} lacks the column {col!r}")
        for e, sid, tail, rel, g, toks in zip(d["entity_id"], d["sentence_id"], d["tail"], d["relation"],
                                              d["gender"], d["tokens"]):
            hit = ev.sentence.get(sid)
            if hit is None:
                hit = ev.sentence[sid] = has_marriage_word(toks, ev.words)
            b = pairs.setdefault((e, tail), {"relations": set(), "gender": GENDERS[int(g)], "split": split,
                                             "population": pop_of_split[split], "has_word": False})
            b["relations"].add(int(rel))
            b["has_word"] = b["has_word"] or hit
            ev.population_of[e] = pop_of_split[split]
    ev.bags = {k: b for k, b in pairs.items() if SPOUSE in b["relations"]}
    return ev


def rates(ev: SpouseEvidence) -> dict[str, dict[str, dict]]:
    """population -> gender -> {spouse_bags, without_word, rate}."""
    out: dict[str, dict[str, dict]] = {}
    for p in POPULATIONS:
        out[p] = {}
        for g in ("male", "female"):
            sel = [b for b in ev.bags.values() if b["population"] == p and b["gender"] == g]
            n, k = len(sel), sum(not b["has_word"] for b in sel)
            out[p][g] = {"spouse_bags": n, "without_word": k, "rate": (k / n) if n else None}
    return out


# --------------------------------------------------------------------------------------------
# Predictions
# --------------------------------------------------------------------------------------------
def _bag_has_word(row: Mapping, where: str, ev: SpouseEvidence) -> bool:
    sids = row.get("sentence_ids")
    if sids:
        missing = [s for s in sids if s not in ev.sentence]
        if missing:
            raise ValueError(f"{where}: sentence id {missing[0]!r} is not in the benchmark the evidence was read from")
        return any(ev.sentence[s] for s in sids)
    ent = str(row["entity_id"])
    if "tail" in row:
        key = (ent, str(row["tail"]))
    elif str(row["bag_id"]).startswith(ent + "|"):
        key = (ent, str(row["bag_id"])[len(ent) + 1:])
    else:
        raise ValueError(f"{where}: a spouse bag needs 'sentence_ids', 'tail' or a bag_id '<entity_id>|<tail>' "
                         "to find its sentences")
    if key not in ev.bags:
        raise ValueError(f"{where}: no spouse bag ({key[0]!r}, {key[1]!r}) in the benchmark the evidence was read from")
    return ev.bag_has_word(key)


def run_counts(rows: Sequence[tuple[str, dict]], ev: SpouseEvidence, *, rule: str = "argmax",
               name: str = "run", population: str | None = None):
    """Per-entity (tp, fp, fn) counts of one run, with and without the gold spouse bags that have no
    marriage word: ``(entity_ids, genders, counts_all, counts_without, n_dropped_by_gender)``;
    ``population`` keeps the entities of one population."""
    from relext.evaluation.metrics import relation_counts
    from relext.evaluation.score import run_from_rows

    if population is not None and population not in POPULATIONS:
        raise ValueError(f"unknown population {population!r}; expected one of {list(POPULATIONS)}")
    run = run_from_rows(rows, name=name, rule=rule)
    test = [(w, r) for w, r in rows if not (isinstance(r, dict) and r.get("split") in ("validation", "train"))]
    drop = np.zeros(len(test), dtype=bool)
    for i, (where, row) in enumerate(test):
        if run.y_true[i, SPOUSE]:
            drop[i] = not _bag_has_word(row, where, ev)
    keep_rows = np.ones(len(test), dtype=bool)
    if population is not None:
        unknown = [e for e in run.entity_ids if e not in ev.population_of]
        if unknown:
            raise ValueError(f"{name}: entity {unknown[0]!r} is not in the benchmark the evidence was read from")
        keep_rows = np.array([ev.population_of[e] == population for e in run.entity_ids])
    ents = sorted(set(run.entity_ids[keep_rows].tolist()))
    index = {e: j for j, e in enumerate(ents)}
    gender = {e: g for e, g in zip(run.entity_ids, run.genders)}
    r = len(RELATIONS)
    all_c, wo_c = np.zeros((len(ents), r, 3), np.int64), np.zeros((len(ents), r, 3), np.int64)
    for i in np.flatnonzero(keep_rows):
        c = relation_counts(run.y_true[i][None], run.y_pred[i][None])
        all_c[index[run.entity_ids[i]]] += c
        if not drop[i]:
            wo_c[index[run.entity_ids[i]]] += c
    dropped = {g: int(np.sum(drop & keep_rows & (run.genders == g))) for g in ("male", "female")}
    return np.array(ents), np.array([gender[e] for e in ents]), all_c, wo_c, dropped


def read_run_rows(path) -> list[tuple[str, dict]] | dict[int, list[tuple[str, dict]]]:
    """One run's prediction rows: a plain prediction set (:func:`relext.evaluation.score.read_prediction_set`),
    or a cross-fitted one (a folder of ``fold<k>`` sets, :func:`relext.evaluation.score.fold_sets`) as
    ``{fold: rows}``."""
    from relext.evaluation import score

    folds = score.fold_sets(path) if hasattr(score, "fold_sets") else None
    if folds is None:
        return score.read_prediction_set(path)
    return {k: score.read_prediction_set(p) for k, p in folds}


def _run_counts_any(rows, ev, *, rule, name, population):
    """:func:`run_counts` of a plain run, or of each fold of a cross-fitted one (``{fold: rows}``,
    persons disjoint across folds; each fold decided on its own rows, e.g. its own threshold),
    joined and ordered by entity id; the last item is each entity's fold (None: no folds)."""
    if not isinstance(rows, Mapping):
        return (*run_counts(rows, ev, rule=rule, name=name, population=population), None)
    parts = []
    for k in sorted(rows):
        parts.append((k, run_counts(rows[k], ev, rule=rule, name=f"{name} fold {k}", population=population)))
    ids = np.concatenate([p[0] for _, p in parts])
    if len(set(ids.tolist())) != len(ids):
        raise ValueError(f"{name}: a person is predicted in two folds; cross-fitted folds hold disjoint persons")
    order = np.argsort(ids, kind="stable")
    cat = lambda j: np.concatenate([p[j] for _, p in parts])[order]  # noqa: E731
    dropped = {g: sum(p[4][g] for _, p in parts) for g in ("male", "female")}
    fold = np.concatenate([np.full(len(p[0]), k, dtype=np.int64) for k, p in parts])[order]
    return ids[order], cat(1), cat(2), cat(3), dropped, fold


def spouse_gap_sensitivity(runs: Sequence, ev: SpouseEvidence, *, rule: str = "argmax",
                           population: str | None = None, n_resamples: int = 2000, seed: int = 0) -> dict:
    """The spouse F1 gap (male - female) of ``runs`` with all bags and without the gold spouse bags
    that have no marriage word, and ``without - all`` (paired on runs and entities). Each run is a
    list of ``(where, row)`` prediction rows or, cross-fitted, ``{fold: rows}``
    (:func:`read_run_rows`); several runs are seeds. Cross-fitted runs resample persons within fold
    and gender. ``population`` ("test" / "distant") keeps the persons of one population."""
    from wgbstats.design import Design
    from relext.evaluation.study_counts import StudyCounts

    if not runs:
        raise ValueError("no runs")
    ids = genders = fold = None
    counts: dict[str, dict[int, np.ndarray]] = {"all": {}, "without": {}}
    dropped = []
    for k, rows in enumerate(runs):
        e, g, c_all, c_wo, d, f = _run_counts_any(rows, ev, rule=rule, name=f"run {k}", population=population)
        if ids is None:
            ids, genders, fold = e, g, f
        elif (not np.array_equal(ids, e) or (fold is None) != (f is None)
              or (f is not None and not np.array_equal(fold, f))):
            raise ValueError(f"run {k}: other entities (or folds) than run 0; the runs of one estimate share "
                             "their bags and folds")
        counts["all"][k], counts["without"][k] = c_all, c_wo
        dropped.append(d)
    data = StudyCounts(ids, genders, counts) if fold is None else StudyCounts(ids, genders, counts, fold=fold)
    design = Design(data, n_resamples=n_resamples, seed=seed)
    name = f"f1_gap:{RELATIONS[SPOUSE]}"
    seeded = len(runs) >= 3
    out = {"rule": rule, "population": population or "all", "n_runs": len(runs), "n_resamples": n_resamples,
           "folds": None if fold is None else int(len(set(fold.tolist()))),
           "entities": {gg: int(np.sum(genders == gg)) for gg in ("male", "female")},
           "dropped_bags_per_run": dropped, "words": sorted(ev.words),
           "interval": "seeds x entities" if seeded else "entities (fewer than 3 runs: no seed level)"}
    for key, est in (("all", design.metric("all", name)), ("without", design.metric("without", name)),
                     ("difference", design.difference("without", "all", name))):
        out[key] = {"value": est.value, "ci": est.ci if seeded else est.ci_entity, "ci_entity": est.ci_entity,
                    "se_entity": est.se_entity, "se": est.se if seeded else est.se_entity}
    for key in ("all", "without"):
        pt = design.point(key, sorted(counts[key]))
        out[key].update(f1_male=pt[f"f1_male:{RELATIONS[SPOUSE]}"], f1_female=pt[f"f1_female:{RELATIONS[SPOUSE]}"])
    return out


# --------------------------------------------------------------------------------------------
# Report (from label_noise.json)
# --------------------------------------------------------------------------------------------
LIST_TITLES = {"marriage_words": "marriage words", "with_engagement_words": "marriage + engagement words"}


def add_rates(doc, result: dict):
    """The rate table and the gap table (from label_noise.json) added to a Document."""
    rows = []
    for lst, by_pop in result["rates"].items():
        for pop, by_g in by_pop.items():
            for g in ("female", "male"):
                v = by_g[g]
                rows.append([LIST_TITLES.get(lst, lst), pop, g, str(v["spouse_bags"]), str(v["without_word"]),
                             "–" if v["rate"] is None else f"{100 * v['rate']:.1f}%"])
    doc.table(["word list", "persons", "gender", "spouse bags", "without a marriage word", "rate"], rows)
    issue = result.get("issue_rates_test")
    if issue:
        t = result["rates"]["marriage_words"]["test"]
        doc.para(f"Issue #26 quoted {100 * issue['female']:.1f}% of women's and {100 * issue['male']:.1f}% of "
                 f"men's test spouse bags (no word list given); the list here gives "
                 f"{100 * t['female']['rate']:.1f}% and {100 * t['male']['rate']:.1f}%.")
    grows = []
    for g in result.get("spouse_gap", []):
        for key in ("all", "without", "difference"):
            v = g[key]
            src = g["predictions"] + (f" ({g['system']})" if g.get("system") else "")
            grows.append([src, str(g["n_runs"]), {"all": "all bags", "without": "without such bags",
                                                                "difference": "without - all (paired)"}[key],
                          f"{v['value']:+.4f}", f"[{v['ci'][0]:+.4f}, {v['ci'][1]:+.4f}]",
                          "–" if "f1_male" not in v else f"{v['f1_male']:.4f} / {v['f1_female']:.4f}"])
    if grows:
        doc.table(["predictions", "runs", "bags", "spouse F1 gap (male - female)", "95% interval",
                   "F1 male / female"], grows)
    doc.para(result.get("note", ""))
    return doc


def report_document(result: dict):
    from wgbcore.render import Document

    doc = Document("Label noise: spouse bags without a marriage word (issue #26)")
    doc.para(f"Written by `{result['meta']['command']}` from {result['meta']['data']}. A spouse bag is the "
             "sentences of one head / tail pair whose gold relations include spouse; it has a marriage word when "
             "one of its sentences has one of: " + ", ".join(result["marriage_words"])
             + " (a token or a word of a hyphen / slash compound, lowercased). The wider list adds "
             + ", ".join(result["engagement_words"]) + ". Test persons: the crowd-checked male_test / female_test "
             "splits; distant persons: train and validation (distant supervision).")
    return add_rates(doc, result)


def label_noise_markdown(result: dict) -> str:
    """The tables of label_noise.json as markdown (no page title), for a docs page."""
    from wgbcore.render import Document

    text = add_rates(Document("label noise"), result).markdown()
    return text.split("\n", 1)[1].lstrip("\n")
