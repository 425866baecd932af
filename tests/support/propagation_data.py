"""A synthetic `wgb run` study (candidate pairs and what each graph holds for them, hence per-entity
counts and hypernym holdings; embedding bias results) with planted effects, for the pooled-estimate,
report, browser and known-answer tests; never real data."""
from __future__ import annotations

import numpy as np

from wikigenderbias.schema import RELATIONS

SEEDS = (0, 1, 2)
VARIANTS = ("baseline", "cda")
#: item names, one of them markup (the report must show it as text)
GOLD_ITEMS = ["Actor", "Actress", "Nurse", "Engineer", "<b>Fish & Chips</b>"]
BORN_ITEMS = ["Kerala", "Johnny Depp"]


def _unique_pairs(ids, rel: str) -> list[tuple[int, str, str]]:
    """One gold pair of ``rel`` per person, with a tail of its own."""
    return [(i, f"{rel} of {e}", rel) for i, e in enumerate(ids)]


def _pairs(rows: list[tuple[int, str, str]]):
    """:class:`Pairs` from (person row, tail, gold relation or "NA") rows."""
    from wgb.pipeline.pairs import Pairs

    gold = np.zeros((len(rows), len(RELATIONS)), dtype=bool)
    for k, (_, _, r) in enumerate(rows):
        gold[k, RELATIONS.index(r)] = True
    return Pairs(np.array([r[0] for r in rows], dtype=np.int64), gold, np.array([r[1] for r in rows], dtype=object))


def synthetic_study(n_male: int = 300, n_female: int = 300, seeds=SEEDS, *, gap: float = 0.3, seed: int = 0):
    """A :class:`wgb.pipeline.propagation.Study` built from candidate pairs: every person has one
    gold pair per relation and two negative pairs (tails Kerala and Johnny Depp). On spouse the
    baseline recovers men's facts with recall 0.9 and women's with 0.9 - ``gap`` (cda: half the
    gap); the other relations have recall 0.8 for both. Gold hypernym items: men Actor / Engineer,
    women Actress / Nurse, a few of both Fish & Chips; the extracted graphs turn men's Kerala pairs
    and women's Johnny Depp pairs into error-born items (gendered errors, equal exposure)."""
    from wgb.pipeline.propagation import study_from_pairs

    rng = np.random.default_rng(seed)
    ids = [f"m{i:03d}" for i in range(n_male)] + [f"f{i:03d}" for i in range(n_female)]
    gender = ["male"] * n_male + ["female"] * n_female
    male = np.array(gender) == "male"
    rows = [p for r in ("spouse", "birthDate", "birthPlace") for p in _unique_pairs(ids, r)]
    for i in range(len(ids)):
        u = rng.random()
        own = ("Actor", "Engineer") if male[i] else ("Actress", "Nurse")
        rows.append((i, own[0] if u < 0.55 else own[1] if u < 0.9 else "<b>Fish & Chips</b>", "hypernym"))
    rows += [(i, o, "NA") for i in range(len(ids)) for o in BORN_ITEMS]
    pairs = _pairs(rows)
    spouse, hyp = RELATIONS.index("spouse"), RELATIONS.index("hypernym")
    gold_rel = pairs.gold.argmax(1)
    mine = male[pairs.entity]
    for v, g, born in (("baseline", gap, 0.2), ("cda", gap / 2, 0.1)):
        for s in seeds:
            recall = np.where(gold_rel == spouse, np.where(mine, 0.9, 0.9 - g), 0.8)
            x = np.zeros(pairs.gold.shape, dtype=bool)
            pos = gold_rel != 0
            x[pos, gold_rel[pos]] = rng.random(int(pos.sum())) < recall[pos]
            for o, side in (("Kerala", male), ("Johnny Depp", ~male)):   # invented items, one gender each
                k = (pairs.tail == o) & side[pairs.entity]
                x[k, hyp] = rng.random(int(k.sum())) < born
            pairs.extracted.setdefault(s, {})[v] = x
    return study_from_pairs(ids, gender, pairs, VARIANTS)


def synthetic_bias(study, measure: str = "fisher", *, amplify: float = 1.5, seed: int = 0):
    """Embedding bias results per seed and graph: the gold graph's items score by their planted
    lean; the extracted graphs' shared items ``amplify`` times that (plus noise), error-born items
    their own score."""
    from kge.bias.result import BiasResult, BiasRow, BiasSpec

    rng = np.random.default_rng(seed)
    lean = {"Actor": 0.4, "Engineer": 0.2, "Actress": -0.5, "Nurse": -0.3, "<b>Fish & Chips</b>": 0.05,
            "Kerala": 0.3, "Johnny Depp": -0.2}
    spec = BiasSpec("gender", "male", "female", "hypernym")
    out = {}
    for s in study.seeds:
        per_graph = {}
        for g in ("gold", *study.variants):
            h = study.holds[s][g]
            rows = []
            for j, o in enumerate(study.items[s]):
                if not h[:, j].any():
                    continue
                k = 1.0 if g == "gold" else amplify
                score = lean[o] * k + rng.normal(0, 0.01)
                rows.append(BiasRow(measure, f"transe:{g}", "gender", "male", "female", "hypernym", o, float(score),
                                    int(h[study.male, j].sum()), int(h[study.female, j].sum())))
            per_graph[g] = [BiasResult(measure, f"transe:{g}", spec, rows, seed=s)]
        out[s] = per_graph
    return out


def extractor_study(n_male: int = 150, n_female: int = 150, seeds=SEEDS, *, gendered: bool = False, seed: int = 0,
                    miss: float = 0.1, spurious: float = 0.08, n_rare: int = 30, rare: float = 0.01,
                    gold_seed: int | None = None):
    """A :class:`wgb.pipeline.propagation.Study` from candidate pairs whose gold hypernym holdings
    lean by gender; every person also has a negative pair to each of four items (Kerala, Football,
    Johnny Depp, Opera) and to ``n_rare`` rare ones (equal exposure). The extractor (one per seed)
    misses each gold holding with probability ``miss`` and turns each of the four negative pairs
    into a holding with probability ``spurious``. Gender-blind (``gendered=False``): every error
    independent of the person's gender. Gendered: the same error counts in expectation, but
    spurious items follow the stereotype (Kerala and Football to men, Johnny Depp and Opera to
    women) and misses fall on the holders of the other gender's items. Either way the rare
    negative pairs become holdings with probability ``rare`` regardless of gender: they add bias
    mass (a sum of |score|) without any gendered error."""
    from wgb.pipeline.propagation import study_from_pairs

    rng = np.random.default_rng(seed)
    ids = [f"m{i:03d}" for i in range(n_male)] + [f"f{i:03d}" for i in range(n_female)]
    gender = np.array(["male"] * n_male + ["female"] * n_female)
    male = gender == "male"
    lean = {"Actor": 0.35, "Engineer": 0.25, "Writer": 0.0, "Actress": -0.35, "Nurse": -0.25, "Singer": -0.05}
    stereo = {"Kerala": 1, "Football": 1, "Johnny Depp": -1, "Opera": -1}    # the gendered extractor's errors
    rares = [f"Rare {i}" for i in range(n_rare)]
    g_rng = rng if gold_seed is None else np.random.default_rng(gold_seed)   # the same gold graph for two extractors
    rows = []
    for o, lo in lean.items():
        held = g_rng.random(len(ids)) < np.where(male, 0.25 + lo / 2, 0.25 - lo / 2)
        rows += [(i, o, "hypernym") for i in np.flatnonzero(held)]
    rows += [(i, o, "NA") for i in range(len(ids)) for o in (*stereo, *rares)]
    pairs = _pairs(rows)
    hyp = RELATIONS.index("hypernym")
    gold = pairs.gold[:, hyp]
    mine = male[pairs.entity]
    tail_lean = np.array([lean.get(t, 0.0) for t in pairs.tail])
    side = np.array([stereo.get(t, 0) for t in pairs.tail])
    rare_pair = np.isin(pairs.tail, rares)
    for s in seeds:
        if gendered:   # misses: twice as likely for a counter-stereotypical holding, half for the others
            counter = ((tail_lean < 0) == mine) & (tail_lean != 0)
            p_miss = np.where(counter, min(1.0, 2 * miss), miss / 2)
            p_spur = np.where(side == 0, 0.0, np.where((side > 0) == mine, 2 * spurious, 0.0))
        else:
            p_miss = np.full(len(pairs), miss)
            p_spur = np.where(side == 0, 0.0, spurious)
        u = rng.random(len(pairs))
        x = np.zeros(pairs.gold.shape, dtype=bool)
        x[:, hyp] = np.where(gold, u >= p_miss, np.where(rare_pair, u < rare, u < p_spur))
        pairs.extracted[s] = {"baseline": x}
    return study_from_pairs(ids, gender, pairs, ["baseline"])


def exposure_study(n_male: int = 400, n_female: int = 400, seeds=SEEDS, *, negatives=(0.5, 2.0),
                   spurious=(0.3, 0.3), miss: float = 0.1, seed: int = 0, variants=("baseline",)):
    """Known answers for the exposure-matched nulls (issue #38): a :class:`Study` from candidate
    pairs where every person has one gold pair per relation (hypernym items lean by gender) and a
    Poisson number of negative pairs, ``negatives`` = (men's mean, women's mean), with tails from
    six items both genders share. The extractor (one per seed) misses each gold fact with
    probability ``miss`` (gender-blind) and turns a negative pair into a fact with probability
    ``spurious`` = (for men's pairs, for women's): a hypernym holding of its tail or a birthPlace
    fact, half each. Equal ``spurious`` with unequal ``negatives``: gender-blind errors, gendered
    exposure; unequal ``spurious``: errors gendered beyond exposure."""
    from wgb.pipeline.propagation import study_from_pairs

    rng = np.random.default_rng(seed)
    ids = [f"m{i:03d}" for i in range(n_male)] + [f"f{i:03d}" for i in range(n_female)]
    gender = np.array(["male"] * n_male + ["female"] * n_female)
    male = gender == "male"
    pool = ["Kerala", "Football", "Opera", "Johnny Depp", "Piano", "Paris"]
    rows = [p for r in ("spouse", "birthDate", "birthPlace") for p in _unique_pairs(ids, r)]
    for i in range(len(ids)):
        own = ("Actor", "Engineer", "Writer") if male[i] else ("Actress", "Nurse", "Writer")
        rows.append((i, own[int(rng.integers(3))], "hypernym"))
        k = min(len(pool), int(rng.poisson(negatives[0] if male[i] else negatives[1])))
        rows += [(i, o, "NA") for o in rng.choice(pool, size=k, replace=False)]
    pairs = _pairs(rows)
    hyp, place = RELATIONS.index("hypernym"), RELATIONS.index("birthPlace")
    gold_rel = pairs.gold.argmax(1)
    mine = male[pairs.entity]
    neg = gold_rel == 0
    for s in seeds:
        for v in variants:
            x = np.zeros(pairs.gold.shape, dtype=bool)
            pos = ~neg
            x[pos, gold_rel[pos]] = rng.random(int(pos.sum())) >= miss
            fact = neg & (rng.random(len(pairs)) < np.where(mine, spurious[0], spurious[1]))
            to_hyp = rng.random(len(pairs)) < 0.5
            x[fact & to_hyp, hyp] = True
            x[fact & ~to_hyp, place] = True
            pairs.extracted.setdefault(s, {})[v] = x
    return study_from_pairs(ids, gender, pairs, list(variants))


def release_subset(folder, sizes: dict[str, int]):
    """A benchmark folder holding the first ``sizes[split]`` articles of each split of the embedded
    release (real text, for end-to-end runs of ``wgb run``)."""
    import wikigenderbias
    from wikigenderbias.export import write_benchmark
    from wikigenderbias.schema import GENDERS

    ents = wikigenderbias.load("entities")
    out = {}
    for split, k in sizes.items():
        rows = ents[split].select(range(k)).to_list()
        for r in rows:
            r["gender"] = GENDERS[r["gender"]]
        out[split] = rows
    return write_benchmark(folder, out, description="subset", progress=False)
