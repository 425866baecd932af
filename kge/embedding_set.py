"""Several embedding dirs as one set (issue #42): the trainings of one or more models at several
seeds whose bias measures are compared over seeds and models (:mod:`kge.bias.stability`).

Each dir says what it is in its own ``config.json`` (written by ``wgb kge train``): the model
(``model``; the label is ``model_label`` when the config has one, else the model name), the
training seed (``seed``) and the graph it was trained on (``graph``: names and triples hashes).
:func:`expand` turns the command line's sources (dirs, glob patterns, ``@FILE`` lists of dirs, one
per line, ``#`` comments, an optional label after the dir) into dirs; :func:`read_set` reads and
checks them as a set before anything is loaded or scored, each problem one line naming the dir:

* a dir without embeddings (no ``config.json``, or a tensor file it lists missing);
* dirs trained on different graphs;
* one label at the same seed twice;
* one label whose dirs differ in a training setting other than the seed (their differences would
  pass for seed variation): give them apart with a label in a list file.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from kge.embeddings import read_config
from kge.graph_io import find_file

GLOB_CHARS = "*?["
#: Training settings that may differ between the seeds of one label (they are the seed's own, or
#: bookkeeping that does not change the embeddings).
PER_RUN = frozenset({"seed", "num_threads", "checkpoint_every", "eval_batch_size", "evaluate_test", "device",
                     "max_train_seconds"})


@dataclass
class EmbeddingRun:
    """One embedding dir of a set: its label (model name unless given), training seed, config."""

    path: Path
    label: str
    seed: int
    config: dict = field(repr=False, default_factory=dict)

    @property
    def graph_key(self) -> tuple:
        g = self.config.get("graph") or {}
        return (g.get("names_sha256"), g.get("triples_sha256")) if isinstance(g, dict) else (None, None)


def is_graph(arg: str) -> bool:
    """Whether a command-line argument names a graph rather than embeddings: ``fb13``, a file
    that is not an ``@`` list, or a folder in one of the graph formats (OpenKE ``entity2id.txt``, a
    graph dir's ``triples/``, labelled TSV ``train.tsv``) without an embedding dir's config.json."""
    p = Path(arg)
    if arg.lower() == "fb13":
        return True
    if arg.startswith("@") or not p.exists():
        return False
    if p.is_file():
        return True
    return not (p / "config.json").exists() and (
        find_file(p, "entity2id", [".txt"]) is not None or (p / "triples").is_dir()
        or find_file(p, "train", [".tsv", ".txt"]) is not None)


def _list_file(path: Path) -> list[tuple[Path, str | None]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read the list of embedding dirs ({type(e).__name__}: {e})") from None
    out = []
    for i, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) > 2:
            raise ValueError(f"{path}:{i}: expected 'DIR' or 'DIR LABEL', got {len(parts)} fields")
        d = Path(parts[0]) if Path(parts[0]).is_absolute() else path.parent / parts[0]
        out.append((d, parts[1] if len(parts) == 2 else None))
    if not out:
        raise ValueError(f"{path}: lists no embedding dir")
    return out


def expand(sources: list[str]) -> list[tuple[Path, str | None]]:
    """(dir, label or None) for every source: a dir, a glob pattern (its matches, sorted) or
    ``@FILE`` (a list file; relative dirs are read from the file's folder). A pattern that matches
    nothing and a dir named twice are errors."""
    out: list[tuple[Path, str | None]] = []
    for src in sources:
        if src.startswith("@"):
            out.extend(_list_file(Path(src[1:])))
        elif any(c in src for c in GLOB_CHARS) and not os.path.exists(src):
            hits = sorted(glob.glob(src))
            if not hits:
                raise ValueError(f"{src}: the pattern matches no embedding dir")
            out.extend((Path(h), None) for h in hits)
        else:
            out.append((Path(src), None))
    seen: dict[Path, int] = {}
    for i, (d, _) in enumerate(out):
        key = d.resolve()
        if key in seen:
            raise ValueError(f"{d}: given twice")
        seen[key] = i
    return out


def _check_dir(d: Path) -> dict:
    if not d.is_dir():
        raise ValueError(f"{d}: not an embedding dir (no such folder)")
    try:
        cfg = read_config(d)
    except FileNotFoundError:
        raise ValueError(f"{d}: not an embedding dir (config.json missing)") from None
    tensors = cfg.get("tensors") or {"entity": {"file": "entities.npy"}}
    for spec in tensors.values():
        f = d / (spec.get("file", "") if isinstance(spec, dict) else str(spec))
        if not f.is_file():
            raise ValueError(f"{d}: no embeddings ({f.name} missing; listed in config.json)")
    return cfg


def _settings(cfg: dict) -> dict:
    tc = cfg.get("train_config")
    base = {k: cfg.get(k) for k in ("model", "dim", "hparams")}
    if isinstance(tc, dict):
        base.update({f"train_config.{k}": v for k, v in tc.items() if k not in PER_RUN})
    return base


def read_set(sources: list[tuple[Path, str | None]], *, need_seed: bool = True) -> list[EmbeddingRun]:
    """Each dir's label, seed and config, checked as a set (module docstring); sorted by label and
    seed. ``need_seed``: a dir whose config records no integer seed is an error (with one dir the
    caller may default it)."""
    runs = []
    for d, label in sources:
        cfg = _check_dir(d)
        seed, tc = cfg.get("seed"), cfg.get("train_config")
        if seed is None and isinstance(tc, dict):
            seed = tc.get("seed")
        if seed is None and not need_seed:
            seed = 0
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"{d}/config.json: field 'seed' missing or not an integer ({seed!r}); the seeds of a set "
                             "are read from each dir (embeddings written by `wgb kge train` record theirs)")
        lbl = label or cfg.get("model_label") or cfg["model"]
        runs.append(EmbeddingRun(d, str(lbl), seed, cfg))
    first = runs[0]
    for r in runs[1:]:
        if r.graph_key != first.graph_key or r.config.get("num_entities") != first.config.get("num_entities"):
            raise ValueError(f"{r.path} and {first.path} were trained on different graphs "
                             f"({r.config.get('graph_name')!r} names hash {r.graph_key[0]} vs "
                             f"{first.config.get('graph_name')!r} names hash {first.graph_key[0]})")
    by_label: dict[str, list[EmbeddingRun]] = {}
    for r in runs:
        by_label.setdefault(r.label, []).append(r)
    for lbl, rs in by_label.items():
        seen: dict[int, EmbeddingRun] = {}
        for r in rs:
            if r.seed in seen:
                raise ValueError(f"{seen[r.seed].path} and {r.path}: {lbl} at seed {r.seed} twice (a set holds one "
                                 "embedding per label and seed; give one of them its own label in a list file)")
            seen[r.seed] = r
        ref = _settings(rs[0].config)
        for r in rs[1:]:
            other = _settings(r.config)
            diff = sorted(k for k in set(ref) | set(other) if ref.get(k) != other.get(k))
            if diff:
                k = diff[0]
                raise ValueError(f"{rs[0].path} and {r.path}: both {lbl} but trained with other {k} "
                                 f"({ref.get(k)!r} vs {other.get(k)!r}), which would pass for seed variation; "
                                 "give them apart with a label in a list file (@FILE: 'DIR LABEL' per line)")
    return sorted(runs, key=lambda r: (r.label, r.seed))
