"""Turn a trained extractor's bag predictions into knowledge-graph triples (JSON lines).

Output, one object per line (the input format of the ``kge`` package)::

    {"head", "relation", "tail", "score", "head_gender",
     "source": {"split", "bag_id", "sentence_ids"}}

Rules: ``argmax`` (default) emits at most one triple per bag, its highest-scoring class, and
drops bags whose top class is NA; ``all`` emits every positive relation of a bag whose score
reaches ``min_score`` (several triples per bag possible). In both, triples scoring below
``min_score`` are dropped. Output is sorted by descending score (ties: input order).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from relext.evaluation.evaluate import ensure_predictions, prediction_path, read_predictions
from wgbcore.atomicio import atomic_write_text, iter_jsonl
from wikigenderbias.schema import GENDERS, RELATIONS
from wikigenderbias.spans import locate as spans_locate

RULES: tuple[str, ...] = ("argmax", "all")


def _check_min_score(min_score) -> None:
    if isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not 0 <= min_score <= 1:
        raise ValueError(f"min_score must be a number in [0, 1], got {min_score!r}")  # NaN too


def triples_from_predictions(
    rows: Iterable[Mapping], *, min_score: float = 0.0, rule: str = "argmax",
    split: str | None = None,
) -> list[dict]:
    """Triples from prediction rows (see the module docstring for the rules)."""
    if rule not in RULES:
        raise ValueError(f"unknown extraction rule {rule!r}; expected one of {list(RULES)}")
    _check_min_score(min_score)
    out: list[dict] = []
    for row in rows:
        scores = row["scores"]
        if rule == "argmax":
            best = max(range(len(scores)), key=lambda j: (scores[j], -j))
            picks = [best] if best != 0 else []
        else:
            picks = list(range(1, len(scores)))
        for j in picks:
            if scores[j] < min_score:
                continue
            out.append({
                "head": row["head"],
                "relation": RELATIONS[j],
                "tail": row["tail"],
                "score": float(scores[j]),
                "head_gender": row.get("gender"),
                "source": {"split": row.get("split", split), "bag_id": row.get("bag_id"),
                           "sentence_ids": list(row.get("sentence_ids", []))},
            })
    out.sort(key=lambda t: -t["score"])
    return out


def write_triples(triples: Sequence[Mapping], path: str | Path) -> Path:
    text = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in triples)
    return atomic_write_text(path, text)


def extract_split(run_dir: str | Path, split: str, *, min_score: float = 0.0,
                  rule: str = "argmax", predict_fn=None, dataset=None, notes: list | None = None,
                  cache: bool | None = None) -> list[dict]:
    """Triples of a run over one benchmark split.

    ``cache`` (default: unless ``run_dir`` is a shipped pretrained model, ``model.safetensors``
    without ``model.pt``): write the predictions to ``run_dir/predictions/`` first if missing and
    read them from there; cached predictions are checked against the run's model, config and
    data first (:func:`relext.evaluation.evaluate.ensure_predictions`: refused, or predicted again when the
    data changed, which goes to ``notes``). Without it the split is predicted in memory and
    nothing is written into ``run_dir``."""
    _check_min_score(min_score)  # before any prediction
    if cache is None:
        cache = (Path(run_dir) / "model.pt").exists() or not (Path(run_dir) / "model.safetensors").exists()
    if not cache:
        if predict_fn is not None:  # predict_fn writes prediction files
            raise ValueError("extract_split: predict_fn writes prediction files; it needs cache=True")
        from relext.training.predict import predict_split

        rows = predict_split(run_dir, split, dataset=dataset)
        return triples_from_predictions(rows, min_score=min_score, rule=rule, split=split)
    # cached predictions are checked there against the run's model, config and data
    ensure_predictions(run_dir, (split,), predict_fn=predict_fn, dataset=dataset, notes=notes)
    rows = read_predictions(prediction_path(run_dir, split))
    return triples_from_predictions(rows, min_score=min_score, rule=rule, split=split)


# --------------------------------------------------------------------------------------------
# New text
# --------------------------------------------------------------------------------------------
TEXT_SPLIT = "text"
_TOKEN = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Simple word / punctuation tokenization for new text (the benchmark is space-tokenized)."""
    return _TOKEN.findall(text)


def read_text_file(path: str | Path) -> list[dict]:
    """Read new-text sentences: JSON lines of ``{"head", "tail", "gender"?, "tokens" | "text",
    "head_span"?, "tail_span"?}``; spans are token offsets [start, end), located when absent.
    Errors name the file, line and field."""
    path = Path(path)
    rows = []
    for where, d in iter_jsonl(path):
        lineno = int(where.rsplit(":", 1)[1])
        if not isinstance(d, dict):
            raise ValueError(f"{where}: expected a JSON object")
        for key in ("head", "tail"):
            if not isinstance(d.get(key), str) or not d[key].strip():
                raise ValueError(f"{where}: missing or empty field {key!r}")
        if "tokens" in d:
            tokens = d["tokens"]
            if not isinstance(tokens, list) or not tokens or not all(isinstance(t, str) for t in tokens):
                raise ValueError(f"{where}: field 'tokens' must be a non-empty list of strings")
        elif isinstance(d.get("text"), str) and d["text"].strip():
            tokens = tokenize(d["text"])
        else:
            raise ValueError(f"{where}: needs a 'tokens' list or a non-empty 'text'")
        gender = d.get("gender")
        if gender is not None:
            if not isinstance(gender, str) or gender.strip().lower() not in GENDERS:
                raise ValueError(f"{where}: field 'gender' is {gender!r}; expected one of {GENDERS}")
            gender = gender.strip().lower()
        # mentions not given are located with the benchmark's own rules (names, name parts,
        # dates, labels); the relation is unknown, so the tail is matched as NA tails are
        found = spans_locate(tokens, d["head"], d["tail"], "NA")
        located = {"head_span": list(found.head_span), "tail_span": list(found.tail_span)}
        spans = {}
        for key in ("head_span", "tail_span"):
            if key in d:
                s = d[key]
                if (not isinstance(s, list) or len(s) != 2 or not all(isinstance(x, int) for x in s)
                        or not 0 <= s[0] < s[1] <= len(tokens)):
                    raise ValueError(f"{where}: field {key!r} must be [start, end) token offsets "
                                     f"within the {len(tokens)} tokens, got {s!r}")
                spans[key] = list(s)
            else:
                spans[key] = located[key]
        rows.append({"line": lineno, "head": d["head"], "tail": d["tail"], "gender": gender,
                     "tokens": tokens, "text": d.get("text", " ".join(tokens)), **spans})
    if not rows:
        raise ValueError(f"{path}: no sentences")
    return rows


def text_dataset(sentences: Sequence[Mapping]):
    """A ``sentences``-config dataset (split ``text``) of new sentences; relation unknown (NA),
    one entity per head; a missing gender is stored as -1 (no label)."""
    from datasets import Dataset, DatasetDict

    from wikigenderbias.schema import sentence_features

    feats = sentence_features()
    recs = {k: [] for k in feats}
    for i, s in enumerate(sentences):
        recs["id"].append(f"text-{i:06d}")
        recs["entity_id"].append(f"text:{s['head']}")
        recs["sentence_id"].append(f"text-line{s['line']}")
        recs["head"].append(s["head"])
        recs["tail"].append(s["tail"])
        recs["relation"].append(0)
        recs["gender"].append(GENDERS.index(s["gender"]) if s["gender"] else -1)
        recs["text"].append(s["text"])
        recs["tokens"].append(list(s["tokens"]))
        recs["head_span"].append(s["head_span"])
        recs["tail_span"].append(s["tail_span"])
        recs["head_match"].append("given" if s["head_span"] != [-1, -1] else "none")
        recs["tail_match"].append("given" if s["tail_span"] != [-1, -1] else "none")
        recs["source"].append(0)
    return DatasetDict({TEXT_SPLIT: Dataset.from_dict(recs, features=feats)})


def unmentioned(sentence: Mapping) -> list[str]:
    """Which of a new-text sentence's head and tail it does not mention (neither given nor located)."""
    return [f"{role} {sentence[role]!r}" for role in ("head", "tail")
            if list(sentence[f"{role}_span"]) == [-1, -1]]


def mentions_both(sentence: Mapping) -> bool:
    """Whether both the head and the tail of a new-text sentence were given or located in it."""
    return not unmentioned(sentence)


UNMENTIONED = ("refuse", "skip")


def extract_text(run_dir: str | Path, text_file: str | Path, *, min_score: float = 0.0,
                 rule: str = "argmax", predict_split_fn=None, skipped: list | None = None,
                 unmentioned_policy: str = "refuse") -> list[dict]:
    """Triples from new text: sentences are grouped into bags by (head, tail) and scored by the
    run's model through ``relext.training.predict.predict_split(run_dir, "text", dataset=...)``.

    A sentence that does not mention its head or its tail says nothing about the pair, so it is
    never scored: ``unmentioned_policy="refuse"`` (default) makes it an error naming its
    ``file:line``; ``"skip"`` leaves it out (its ``file:line`` goes to ``skipped``), and a file
    of such sentences only is an error."""
    _check_min_score(min_score)
    if unmentioned_policy not in UNMENTIONED:
        raise ValueError(f"unmentioned_policy must be one of {UNMENTIONED}, got {unmentioned_policy!r}")
    sentences = read_text_file(text_file)
    kept = [s for s in sentences if mentions_both(s)]
    bad = [s for s in sentences if not mentions_both(s)]
    if bad and unmentioned_policy == "refuse":
        s = bad[0]
        raise ValueError(f"{text_file}:{s['line']}: the sentence does not mention its "
                         f"{' nor its '.join(unmentioned(s))}, so it says nothing about the pair "
                         f"({len(bad)} such line(s)); fix it, give head_span/tail_span, or skip such lines "
                         "(--unmentioned skip)")
    dropped = [f"{text_file}:{s['line']}" for s in bad]
    if skipped is not None:
        skipped.extend(dropped)
    if not kept:
        raise ValueError(f"{text_file}: no sentence mentions both its head and its tail (lines "
                         f"{', '.join(d.rsplit(':', 1)[1] for d in dropped[:10])}"
                         f"{', ...' if len(dropped) > 10 else ''}); nothing to extract")
    sentences = kept
    ds = text_dataset(sentences)
    if predict_split_fn is None:
        from relext.training.predict import predict_split as predict_split_fn
    rows = predict_split_fn(Path(run_dir), TEXT_SPLIT, dataset=ds)
    genders: dict[str, str | None] = {}
    for s in sentences:  # a head's gender given on any of its lines (a line without one keeps it)
        key = f"text:{s['head']}"
        genders[key] = genders.get(key) or s["gender"]
    for row in rows:
        row["gender"] = genders.get(row.get("entity_id"), row.get("gender"))
        row.setdefault("split", TEXT_SPLIT)
    return triples_from_predictions(rows, min_score=min_score, rule=rule, split=TEXT_SPLIT)
