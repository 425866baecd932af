"""A synthetic `wgb run` study (per-entity counts, hypernym holdings, embedding bias results) with
planted effects, for the pooled-estimate, report and browser tests; never real data."""
from __future__ import annotations

import numpy as np

from wikigenderbias.schema import RELATIONS

SEEDS = (0, 1, 2)
VARIANTS = ("baseline", "cda")
#: item names, one of them markup (the report must show it as text)
GOLD_ITEMS = ["Actor", "Actress", "Nurse", "Engineer", "<b>Fish & Chips</b>"]
BORN_ITEMS = ["Kerala", "Johnny Depp"]


def recall_counts(rng, n: int, recall: float, rel: int, extra_fp: float = 0.0) -> np.ndarray:
    """(n, R, 3) counts: one gold triple of relation ``rel`` per entity, recovered with
    probability ``recall``; a false triple with probability ``extra_fp``."""
    c = np.zeros((n, len(RELATIONS), 3), dtype=np.int64)
    hit = rng.random(n) < recall
    c[:, rel, 0] = hit
    c[:, rel, 2] = ~hit
    c[:, rel, 1] = rng.random(n) < extra_fp
    return c


def synthetic_study(n_male: int = 300, n_female: int = 300, seeds=SEEDS, *, gap: float = 0.3, seed: int = 0):
    """A :class:`wgb.pipeline.propagation.Study`: on spouse, the baseline recovers men's triples
    with recall 0.9 and women's with 0.9 - ``gap`` (cda: half the gap); the other relations have
    no gap. Holdings: men hold Actor / Engineer, women Actress / Nurse; the extracted graphs lose
    some gold holdings and add error-born items (Kerala to men, Johnny Depp to women)."""
    from relext.design import StudyCounts
    from wgb.pipeline.propagation import Study

    rng = np.random.default_rng(seed)
    ids = [f"m{i:03d}" for i in range(n_male)] + [f"f{i:03d}" for i in range(n_female)]
    gender = ["male"] * n_male + ["female"] * n_female
    spouse = RELATIONS.index("spouse")
    counts: dict[str, dict[int, np.ndarray]] = {}
    for v, g in (("baseline", gap), ("cda", gap / 2)):
        for s in seeds:
            c = np.concatenate([recall_counts(rng, n_male, 0.9, spouse), recall_counts(rng, n_female, 0.9 - g, spouse)])
            for other in ("hypernym", "birthDate", "birthPlace"):
                j = RELATIONS.index(other)
                both = [recall_counts(rng, n_male, 0.8, j), recall_counts(rng, n_female, 0.8, j)]
                c[:, j] = np.concatenate(both)[:, j]
            counts.setdefault(f"extraction:{v}", {})[s] = c
            counts.setdefault(f"graph:{v}", {})[s] = c.copy()
    items = GOLD_ITEMS + BORN_ITEMS
    col = {o: j for j, o in enumerate(items)}
    male = np.array(gender) == "male"
    holds: dict[int, dict[str, np.ndarray]] = {}
    for s in seeds:
        gold = np.zeros((len(ids), len(items)), dtype=bool)
        gold[male, col["Actor"]] = rng.random(n_male) < 0.5
        gold[male, col["Engineer"]] = rng.random(n_male) < 0.3
        gold[~male, col["Actress"]] = rng.random(n_female) < 0.5
        gold[~male, col["Nurse"]] = rng.random(n_female) < 0.3
        gold[:, col["<b>Fish & Chips</b>"]] = rng.random(len(ids)) < 0.1
        h = {"gold": gold}
        for v, born in (("baseline", 0.2), ("cda", 0.1)):
            x = gold & (rng.random(gold.shape) < 0.8)          # extraction loses some gold holdings
            x[male, col["Kerala"]] = rng.random(n_male) < born     # and invents others
            x[~male, col["Johnny Depp"]] = rng.random(n_female) < born / 2
            h[v] = x
        holds[s] = h
    return Study(StudyCounts(np.array(ids), np.array(gender), counts), list(VARIANTS), list(seeds),
                 {s: list(items) for s in seeds}, holds)


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
    """A :class:`wgb.pipeline.propagation.Study` whose gold hypernym holdings lean by gender and
    whose extractor (one per seed) misses each gold holding with probability ``miss`` and adds a
    spurious holding of each of four items with probability ``spurious`` per person. Gender-blind
    (``gendered=False``): every error independent of the person's gender. Gendered: the same error
    counts in expectation, but spurious items follow the stereotype (male-leaning items to men,
    female-leaning to women) and misses fall on the holders of the other gender's items. Either way
    ``n_rare`` rare error-born items are added with probability ``rare`` per person regardless of
    gender: they add bias mass (a sum of |score|) without any gendered error."""
    from relext.design import StudyCounts
    from wgb.pipeline.propagation import Study

    rng = np.random.default_rng(seed)
    ids = [f"m{i:03d}" for i in range(n_male)] + [f"f{i:03d}" for i in range(n_female)]
    gender = np.array(["male"] * n_male + ["female"] * n_female)
    male = gender == "male"
    lean = {"Actor": 0.35, "Engineer": 0.25, "Writer": 0.0, "Actress": -0.35, "Nurse": -0.25, "Singer": -0.05,
            "Kerala": 0.0, "Johnny Depp": 0.0, "Football": 0.0, "Opera": 0.0,
            **{f"Rare {i}": 0.0 for i in range(n_rare)}}
    stereo = {"Kerala": 1, "Football": 1, "Johnny Depp": -1, "Opera": -1}    # the gendered extractor's errors
    items = list(lean)
    gold = np.zeros((len(ids), len(items)), dtype=bool)
    g_rng = rng if gold_seed is None else np.random.default_rng(gold_seed)   # the same gold graph for two extractors
    for j, o in enumerate(items[:6]):
        base = 0.25
        gold[:, j] = g_rng.random(len(ids)) < np.where(male, base + lean[o] / 2, base - lean[o] / 2)
    holds, counts = {}, {}
    for s in seeds:
        x = gold.copy()
        if gendered:   # misses: twice as likely for a counter-stereotypical holding, half for the others
            counter = np.array([[(lean[o] < 0) == m and lean[o] != 0 for o in items] for m in male])
            p = np.where(counter, min(1.0, 2 * miss), miss / 2)
        else:
            p = np.full(gold.shape, miss)
        x &= ~(rng.random(gold.shape) < p)
        for o, side in stereo.items():
            j = items.index(o)
            if gendered:
                target = male if side > 0 else ~male
                x[:, j] |= target & (rng.random(len(ids)) < 2 * spurious)
            else:
                x[:, j] |= rng.random(len(ids)) < spurious
        for i in range(n_rare):
            x[:, items.index(f"Rare {i}")] |= rng.random(len(ids)) < rare
        holds[s] = {"gold": gold, "baseline": x}
        c = np.zeros((len(ids), len(RELATIONS), 3), dtype=np.int64)
        c[:, RELATIONS.index("spouse"), 0] = 1
        counts.setdefault("extraction:baseline", {})[s] = c
        counts.setdefault("graph:baseline", {})[s] = c
    return Study(StudyCounts(np.array(ids), gender, counts), ["baseline"], list(seeds),
                 {s: items for s in seeds}, holds)


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
