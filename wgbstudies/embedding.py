"""Gender bias of a run's word embeddings before and after the extractor trained them.

Hard debiasing (Bolukbasi et al. 2016) removes the gender direction from Word2Vec *before*
training; an extractor that fine-tunes its word embeddings can bring the direction back. For a
finished run this module measures, on its initial embedding rows (the Word2Vec vectors after the
run's vectors transforms, rebuilt from the Word2Vec cache exactly as training built them) and on
its trained rows (``model.pt``, the selected epoch):

* direct bias along the gender direction of the run's *undebiased* Word2Vec (the direction hard
  debiasing removed; 0 at initialisation for a hard-debiased run, by construction);
* direct bias along the direction found again in the vectors themselves ("own direction");
* WEAT effect sizes (Caliskan et al. 2017, tests 6-8) with permutation p-values.

Results are cached per run in ``<run>/embedding_bias.json`` (small, committed with the run's
records); :func:`study_embedding_bias` collects them for a study's variants.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

FILE = "embedding_bias.json"


def _summary(kv, g0: np.ndarray, *, seed: int, n_permutations: int) -> dict[str, Any]:
    from relext.debias.embedding_bias import direct_bias, weat_all
    from relext.debias.hard_debias import gender_direction

    g_own, _ = gender_direction(kv)
    weat = weat_all(kv, seed=seed, n_permutations=n_permutations)
    return {"direct_bias_removed_direction": direct_bias(kv, g0)["value"],
            "direct_bias_own_direction": direct_bias(kv, g_own)["value"],
            "weat": {k: {"effect_size": v["effect_size"], "p_value": v["p_value"]} for k, v in weat.items()}}


def _keyed(words: Sequence[str], vectors: np.ndarray):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=vectors.shape[1])
    kv.add_vectors(list(words), np.asarray(vectors, dtype=np.float32))
    return kv


def run_vectors(run_dir: str | Path, *, dataset=None):
    """(undebiased Word2Vec, initial vectors, trained vectors) of a finished word-embedding run."""

    from relext.protocols.data import apply_dataset_transforms, load_dataset_dict, resolve_transforms
    from relext.model.embeddings import train_word2vec
    from relext.training.train import TrainConfig, training_sentences
    from relext.model.vocab import Vocab

    run_dir = Path(run_dir)
    cfg = TrainConfig.from_json(run_dir / "config.json", record=True)
    data = load_dataset_dict(cfg.dataset, dataset)
    data = apply_dataset_transforms(data, resolve_transforms(cfg.dataset_transform, "dataset"), seed=cfg.seed)
    raw = train_word2vec(training_sentences(data["train"]), cfg.word2vec_params(), cache_dir=cfg.cache_dir)
    init = raw
    for fn in resolve_transforms(cfg.vectors_transform, "vectors"):
        init = fn(init, seed=cfg.seed)
    vocab = Vocab.load(run_dir / "vocab.json")
    from relext.training.train import load_torch_file

    state = load_torch_file(run_dir / "model.pt", what="model")["state_dict"]
    key = next((k for k in state if k.endswith("embed.word.weight")), None)
    if key is None:
        raise ValueError(f"{run_dir}: the model has no word embedding table (a transformer run?)")
    table = state[key].numpy()
    rows = [i for i, t in enumerate(vocab.tokens) if t in init.key_to_index]
    trained = _keyed([vocab.tokens[i] for i in rows], table[rows])
    return raw, init, trained


def run_embedding_bias(run_dir: str | Path, *, n_permutations: int = 2000, seed: int = 0,
                       dataset=None, force: bool = False) -> dict[str, Any]:
    """Embedding bias of one finished run before / after training (cached in the run dir)."""
    from relext.debias.hard_debias import gender_direction
    from wgbcore.atomicio import atomic_write_json

    run_dir = Path(run_dir)
    path = run_dir / FILE
    if path.exists() and not force:
        d = json.loads(path.read_text())
        if d.get("n_permutations") == n_permutations:
            return d
    raw, init, trained = run_vectors(run_dir, dataset=dataset)
    g0, _ = gender_direction(raw)
    out = {"run": run_dir.name, "n_permutations": n_permutations, "seed": seed,
           "initial": _summary(init, g0, seed=seed, n_permutations=n_permutations),
           "trained": _summary(trained, g0, seed=seed, n_permutations=n_permutations)}
    atomic_write_json(path, out)
    return out


def study_embedding_bias(runs: dict[tuple[str, int], Path], *, n_permutations: int = 2000,
                         progress: bool = True) -> dict[str, Any]:
    """Per variant: mean (and per-seed values) of the before / after figures of its runs."""
    from tqdm.auto import tqdm

    per: dict[str, list[dict]] = {}
    for (variant, seed), d in tqdm(sorted(runs.items()), desc="embedding bias", disable=None if progress else True):
        if not ((d / "model.pt").exists() or (d / FILE).exists()):
            continue
        per.setdefault(variant, []).append(run_embedding_bias(d, n_permutations=n_permutations))
    out = {}
    for v, rs in per.items():
        missing: list[str] = []
        names = [r["run"] for r in rs]

        def mean(stage, key):
            return present_mean([r[stage].get(key) for r in rs], f"{stage} {key}", names, missing)

        def weat(stage, test):
            return present_mean([((r[stage].get("weat") or {}).get(test) or {}).get("effect_size") for r in rs],
                                f"{stage} WEAT {test} effect size", names, missing)

        tests = sorted(rs[0]["initial"]["weat"])
        out[v] = {"n_runs": len(rs), "runs": names,
                  **{f"{stage}_{key}": mean(stage, key) for stage in ("initial", "trained")
                     for key in ("direct_bias_removed_direction", "direct_bias_own_direction")},
                  "weat_effect_size": {t: {"initial": weat("initial", t), "trained": weat("trained", t)}
                                       for t in tests}}
        if missing:
            out[v]["missing"] = missing
    return out


def present_mean(values: Sequence[Any], what: str, runs: Sequence[str], notes: list[str]) -> float | None:
    """Mean of the values a run has: a figure saved as null (JSON's NaN, e.g. a WEAT test whose
    words the vocabulary lacks) or NaN is missing, not zero; each missing one is said in ``notes``
    (the figure, how many runs, which). None when no run has it."""
    ok = [float(x) for x in values if x is not None and np.isfinite(float(x))]
    gone = [r for r, x in zip(runs, values) if x is None or not np.isfinite(float(x))]
    if gone:
        notes.append(f"{what}: missing (null) in {len(gone)} of {len(values)} runs ({', '.join(gone)}); "
                     + ("the mean is over the others" if ok else "no run has it"))
    return float(np.mean(ok)) if ok else None


# --------------------------------------------------------------------------------------------
# Embedding bias of each variant's Word2Vec (an independent check of the corpus debiasers)
# --------------------------------------------------------------------------------------------
def embedding_bias_study(variants: Sequence[str], *, seed: int = 0, dataset=None, dataset_path: str | None = None,
                         train_overrides: dict | None = None, n_permutations: int = 10_000,
                         cache_dir: str | None = None) -> dict[str, Any]:
    """Direct bias and WEAT of the Word2Vec each dataset variant trains, before/after hard debiasing.

    Word2Vec is trained exactly as a study run trains it (same corpus, parameters and seed), so
    the vectors come from the relext Word2Vec cache when the study has run.
    """
    from relext.protocols.data import load_dataset_dict
    from relext.debias import canonical_name, get_debiaser, split_outside_brackets
    from relext.debias.embedding_bias import bias_report
    from relext.model.embeddings import train_word2vec
    from relext.training.train import TrainConfig, training_sentences

    cfg = TrainConfig(seed=seed, **(train_overrides or {}))
    base = load_dataset_dict(dataset_path, dataset)
    out: dict[str, Any] = {"seed": seed, "word2vec": cfg.word2vec_params().to_json(), "variants": {},
                           "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    for v in variants:
        canon = canonical_name(v)
        parts = [] if canon == "none" else split_outside_brackets(canon, "+")
        ds_names = [canon] if parts else []
        if any(p.split("[", 1)[0] == "hard_debias" for p in parts):
            raise ValueError(f"embedding bias is measured per dataset variant (none, anonymize, cda, "
                             f"anonymize+cda); {v!r} includes hard_debias, which the report applies itself")
        t0 = time.perf_counter()
        deb = get_debiaser(ds_names[0]) if ds_names else get_debiaser("none")
        data = deb.transform_dataset(base, seed=seed)
        t1 = time.perf_counter()
        kv = train_word2vec(training_sentences(data["train"]), cfg.word2vec_params(),
                            cache_dir=cache_dir or cfg.cache_dir)
        t2 = time.perf_counter()
        rep = bias_report(kv, seed=seed, n_permutations=n_permutations)
        rep["debiaser"] = deb.describe()
        rep["seconds"] = {"transform": round(t1 - t0, 2), "word2vec": round(t2 - t1, 2),
                          "report": round(time.perf_counter() - t2, 2)}
        out["variants"][canonical_name(v)] = rep
    out["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def word2vec_bias_markdown(rep: dict[str, Any]) -> str:
    from relext.evaluation.report import _table, fmt

    lines = ["# Gender bias of the Word2Vec vectors each dataset variant trains", "",
             f"Word2Vec {rep['word2vec']} (as the relation extractors use it), seed {rep['seed']}. "
             "Direct bias: mean |cos(profession, g)| over debiaswe's gender-neutral professions in the "
             "vocabulary, g = first principal component of the definitional pairs (Bolukbasi et al. 2016). "
             "After hard debiasing it is 0 along the original direction by construction; the column "
             "'after (own g)' finds the direction again in the debiased vectors. WEAT: Caliskan et al. "
             "2017 tests 6-8 with male/female terms; effect size d and one-sided permutation p.", ""]
    rows = []
    for v, r in rep["variants"].items():
        rows.append([v, str(r["vocabulary"]), f"{r['direct_bias_before']['n_words']}",
                     fmt(r["direct_bias_before"]["value"]), fmt(r["direct_bias_after"]["value"]),
                     fmt(r["direct_bias_after_own_direction"]["value"]),
                     fmt(r["gender_direction"]["explained_variance_ratio"][0])])
    lines += [_table(["variant", "vocabulary", "professions", "direct bias before", "after",
                      "after (own g)", "PC1 share"], rows), ""]
    rows = []
    for v, r in rep["variants"].items():
        for test in r["weat_before"]:
            b, a = r["weat_before"][test], r["weat_after"][test]
            rows.append([v, test, f"{b['n_x']}/{b['n_y']}/{b['n_a']}/{b['n_b']}",
                         f"{fmt(b['effect_size'])} (p {fmt(b['p_value'])})",
                         f"{fmt(a['effect_size'])} (p {fmt(a['p_value'])})"])
    lines += ["## WEAT before / after hard debiasing", "",
              _table(["variant", "test", "words found X/Y/A/B", "before: d (p)", "after: d (p)"], rows), ""]
    for v, r in rep["variants"].items():
        gp = r["most_gendered_professions_before"]
        lines += [f"- {v}: most feminine professions before: "
                  + ", ".join(f"{w} {c:+.2f}" for w, c in gp["feminine"][:5])
                  + "; most masculine: " + ", ".join(f"{w} {c:+.2f}" for w, c in gp["masculine"][:5])]
    lines += ["", f"Load average: start {rep.get('loadavg_start')}, end {rep.get('loadavg_end')}.", ""]
    return "\n".join(lines)
