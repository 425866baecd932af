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
    import torch

    from relext.data import apply_dataset_transforms, load_dataset_dict, resolve_transforms
    from relext.embeddings import train_word2vec
    from relext.train import TrainConfig, training_sentences
    from relext.vocab import Vocab

    run_dir = Path(run_dir)
    cfg = TrainConfig.from_json(run_dir / "config.json")
    data = load_dataset_dict(cfg.dataset, dataset)
    data = apply_dataset_transforms(data, resolve_transforms(cfg.dataset_transform, "dataset"), seed=cfg.seed)
    raw = train_word2vec(training_sentences(data["train"]), cfg.word2vec_params(), cache_dir=cfg.cache_dir)
    init = raw
    for fn in resolve_transforms(cfg.vectors_transform, "vectors"):
        init = fn(init, seed=cfg.seed)
    vocab = Vocab.load(run_dir / "vocab.json")
    from relext.train import load_torch_file

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
        def mean(stage, key):
            return float(np.mean([r[stage][key] for r in rs]))

        def weat(stage, test):
            return float(np.mean([r[stage]["weat"][test]["effect_size"] for r in rs]))

        tests = sorted(rs[0]["initial"]["weat"])
        out[v] = {"n_runs": len(rs), "runs": [r["run"] for r in rs],
                  **{f"{stage}_{key}": mean(stage, key) for stage in ("initial", "trained")
                     for key in ("direct_bias_removed_direction", "direct_bias_own_direction")},
                  "weat_effect_size": {t: {"initial": weat("initial", t), "trained": weat("trained", t)}
                                       for t in tests}}
    return out


def embedding_bias_markdown(rep: dict[str, Any]) -> str:
    lines = ["| variant | runs | direct bias, removed direction: initial -> trained | own direction: initial "
             "-> trained | WEAT d (first test): initial -> trained |", "|---|---|---|---|---|"]
    for v, r in rep.items():
        t = next(iter(r["weat_effect_size"]), None)
        w = r["weat_effect_size"][t] if t else None
        lines.append(f"| {v} | {r['n_runs']} | {r['initial_direct_bias_removed_direction']:.3f} -> "
                     f"{r['trained_direct_bias_removed_direction']:.3f} | {r['initial_direct_bias_own_direction']:.3f} "
                     f"-> {r['trained_direct_bias_own_direction']:.3f} | "
                     + (f"{t}: {w['initial']:.2f} -> {w['trained']:.2f}" if w else "-") + " |")
    return "\n".join(lines)
