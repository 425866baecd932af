"""Human ground truth for the test sets, as in the paper (three annotators per sentence).

``export_tasks`` writes one annotation item per positive test sentence: the sentence with its
head and tail highlighted and the question "does this sentence express r?" (CSV for crowdsourcing
platforms such as Amazon Mechanical Turk, or JSONL). ``import_answers`` reads the answers (one
row per answer, or one row per item with ``answer_1..answer_k``; MTurk's ``Input.`` /
``Answer.`` column prefixes are accepted), relabels sentences whose majority answer is "no" as
``NA`` (``source = "annotated"``; majority-"yes" sentences keep their relation and become
``annotated`` too), reports Fleiss' kappa and pairwise agreement overall and per test split, and
rewrites the benchmark folder atomically. The paper reports kappa 0.44 and 84% pairwise agreement.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from wgbcore.atomicio import atomic_open

from wikigenderbias.dbpedia import Issues
from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS

__all__ = ["QUESTIONS", "item_id", "export_tasks", "read_answers", "fleiss_kappa", "pairwise_agreement",
           "import_answers", "ImportResult"]

#: The question asked for each relation (head and tail filled in).
QUESTIONS = {
    "spouse": "Does this sentence express that {head} and {tail} are (or were) married?",
    "hypernym": "Does this sentence express that {head} is (or was) a {tail}?",
    "birthDate": "Does this sentence express that {head} was born on {tail}?",
    "birthPlace": "Does this sentence express that {head} was born in {tail}?",
}
TASK_FIELDS = ("item_id", "split", "row_id", "relation", "head", "tail", "question", "sentence_marked",
               "sentence_html", "sentence")
_YES = {"yes", "y", "true", "1", "t"}
_NO = {"no", "n", "false", "0", "f"}


def item_id(entity_id: str, relation: str, tail: str, text: str) -> str:
    """Stable id of one (head, relation, tail, sentence) example."""
    key = "\x1f".join((entity_id, relation, tail, text))
    return "wgb-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def _parquet(folder: Path, config: str, split: str) -> Path:
    p = folder / "data" / config / f"{split}-00000-of-00001.parquet"
    if not p.is_file():
        raise FileNotFoundError(f"{p} not found; is {folder} a benchmark folder written by wgb?")
    return p


def _rows(folder: Path, config: str, split: str) -> list[dict]:
    import pyarrow.parquet as pq

    from wgbcore.fileio import reading

    path = _parquet(folder, config, split)
    with reading(path, "parquet file"):
        return pq.read_table(path).to_pylist()


def _mark(tokens: list[str], hs, ts, open_h="[[", close_h="]]", open_t="<<", close_t=">>") -> str:
    out = []
    for i, tok in enumerate(tokens):
        if i == hs[0]:
            out.append(open_h)
        if i == ts[0]:
            out.append(open_t)
        out.append(tok)
        if i == hs[1] - 1:
            out.append(close_h)
        if i == ts[1] - 1:
            out.append(close_t)
    return " ".join(out)


def export_tasks(folder: str | os.PathLike, out: str | os.PathLike, *, fmt: str | None = None,
                 splits: tuple[str, ...] | None = ("male_test", "female_test")) -> int:
    """Write the annotation items of ``splits`` (positive examples only) to ``out``; returns the
    number of items. The head is marked ``[[...]]`` and the tail ``<<...>>`` (and in bold /
    italics in ``sentence_html``); a mention that could not be located is not marked."""
    import html as html_mod

    folder, out = Path(folder), Path(out)
    fmt = fmt or ("jsonl" if out.suffix in (".jsonl", ".json") else "csv")
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"unknown format {fmt!r}; expected 'csv' or 'jsonl'")
    splits = tuple(splits or ("male_test", "female_test"))
    for s in splits:
        if s not in SPLITS:
            raise ValueError(f"unknown split {s!r}; expected some of {SPLITS}")
    items = []
    for split in splits:
        for r in _rows(folder, "sentences", split):
            rel = RELATIONS[r["relation"]]
            if rel == "NA":
                continue
            hs, ts = r["head_span"], r["tail_span"]
            toks = r["tokens"]
            esc = [html_mod.escape(t) for t in toks]
            items.append({
                "item_id": item_id(r["entity_id"], rel, r["tail"], r["text"]),
                "split": split, "row_id": r["id"], "relation": rel, "head": r["head"], "tail": r["tail"],
                "question": QUESTIONS[rel].format(head=r["head"], tail=r["tail"]),
                "sentence_marked": _mark(toks, hs, ts),
                "sentence_html": _mark(esc, hs, ts, "<b>", "</b>", "<i>", "</i>"),
                "sentence": r["text"],
            })
    with atomic_open(out, "w", newline="") as fh:
        if fmt == "csv":
            w = csv.DictWriter(fh, fieldnames=TASK_FIELDS)
            w.writeheader()
            w.writerows(items)
        else:
            for it in items:
                fh.write(json.dumps(it, ensure_ascii=False) + "\n")
    return len(items)


def _answer(value, where: str) -> bool:
    v = str(value).strip().lower()
    if v in _YES:
        return True
    if v in _NO:
        return False
    raise ValueError(f"{where}: answer {value!r} is not yes/no")


def _norm_key(k: str) -> str:
    k = k.strip()
    for prefix in ("Input.", "Answer."):
        if k.startswith(prefix):
            k = k[len(prefix):]
    return k.lower()


def read_answers(paths: list[str | os.PathLike]) -> dict[str, list[bool]]:
    """``item_id -> answers`` from CSV/JSONL files (long or wide format). A bad value is an error
    naming the file and line."""
    answers: dict[str, list[bool]] = defaultdict(list)
    for path in paths:
        path = Path(path)
        name = path.name
        with open(path, encoding="utf-8", newline="") as fh:
            if path.suffix in (".jsonl", ".json"):
                records = []
                for lineno, line in enumerate(fh, 1):
                    if line.strip():
                        try:
                            records.append((lineno, json.loads(line)))
                        except json.JSONDecodeError as exc:
                            raise ValueError(f"{name}:{lineno}: malformed JSON ({exc.msg})") from None
            else:
                records = [(i + 2, row) for i, row in enumerate(csv.DictReader(fh))]
        for lineno, rec in records:
            if not isinstance(rec, dict):
                raise ValueError(f"{name}:{lineno}: expected an object")
            rec = {_norm_key(k): v for k, v in rec.items() if k is not None}
            where = f"{name}:{lineno}"
            if "item_id" not in rec:
                raise ValueError(f"{where}: missing column 'item_id'")
            iid = str(rec["item_id"]).strip()
            if "answer" in rec:
                answers[iid].append(_answer(rec["answer"], where))
            else:
                wide = sorted(k for k in rec if k.startswith("answer_"))
                if not wide:
                    raise ValueError(f"{where}: missing column 'answer' (or answer_1, answer_2, ...)")
                for k in wide:
                    if str(rec[k]).strip():
                        answers[iid].append(_answer(rec[k], f"{where} ({k})"))
    return dict(answers)


def fleiss_kappa(ratings: list[list[bool]]) -> float:
    """Fleiss' kappa of binary ratings, the same number of raters per item
    (``statsmodels.stats.inter_rater.fleiss_kappa`` on the items x {yes, no} count table). When
    every rating is the same answer, chance agreement is 1 and kappa 0/0: reported as 1.0."""
    if not ratings:
        return float("nan")
    n = len(ratings[0])
    if n < 2 or any(len(r) != n for r in ratings):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    import numpy as np
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss_kappa

    yes = np.array([sum(bool(x) for x in r) for r in ratings])
    if yes.sum() in (0, len(ratings) * n):  # one category only: statsmodels would divide 0 by 0
        return 1.0
    return float(_fleiss_kappa(np.column_stack([yes, n - yes]), method="fleiss"))


def pairwise_agreement(ratings: list[list[bool]]) -> float:
    """Share of agreeing rater pairs, averaged over items."""
    if not ratings:
        return float("nan")
    total = 0.0
    for r in ratings:
        n, y = len(r), sum(r)
        total += (y * (y - 1) + (n - y) * (n - y - 1)) / (n * (n - 1))
    return total / len(ratings)


@dataclass
class ImportResult:
    folder: Path
    items: int
    relabelled_na: int
    kept: int
    fleiss_kappa: float
    pairwise_agreement: float
    per_split: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["folder"] = str(self.folder)
        return d


def _entities(folder: Path, split: str) -> list[dict]:
    out = []
    for e in _rows(folder, "entities", split):
        g = e["gender"]
        e["gender"] = GENDERS[g] if isinstance(g, int) else g
        out.append(e)
    return out


def import_answers(folder: str | os.PathLike, answer_files: list[str | os.PathLike], *,
                   out: str | os.PathLike | None = None, raters: int = 3, overwrite: bool = False,
                   progress: bool = True) -> ImportResult:
    """Relabel the test sentences of ``folder`` from annotators' answers and write the benchmark to
    ``out`` (default: replace ``folder`` atomically). Items without exactly ``raters`` answers and
    answers to unknown items are skipped and reported."""
    from wikigenderbias.export import write_benchmark

    folder = Path(folder)
    out_path = Path(out) if out is not None else folder
    in_place = out_path.resolve() == folder.resolve()
    if not in_place and out_path.exists() and not overwrite:
        raise FileExistsError(f"{out_path} exists; pass overwrite=True (--overwrite) to replace it")
    answers = read_answers(answer_files)
    if not answers:
        raise ValueError("no answers found in " + ", ".join(map(str, answer_files)))
    issues = Issues()
    entities = {s: _entities(folder, s) for s in SPLITS}
    decided, per_split_ratings = _decide(entities, answers, raters, issues)
    if not decided:
        raise ValueError(f"none of the {len(answers)} answered items matches a test sentence of {folder} "
                         f"with exactly {raters} answers ({issues.to_dict()})")
    relabelled = _relabel(entities, decided)
    all_ratings = [r for rs in per_split_ratings.values() for r in rs]
    per_split = {
        s: {"items": len(rs), "fleiss_kappa": fleiss_kappa(rs), "pairwise_agreement": pairwise_agreement(rs),
            "relabelled_na": relabelled[s]}
        for s, rs in per_split_ratings.items()
    }
    result = ImportResult(out_path, len(all_ratings), sum(relabelled.values()),
                          len(all_ratings) - sum(relabelled.values()), fleiss_kappa(all_ratings),
                          pairwise_agreement(all_ratings), per_split, issues.to_dict())
    report, description = _annotated_report(folder, result, answer_files, raters)
    write_benchmark(out_path, entities, description=description, report=report,
                    overwrite=in_place or overwrite, progress=progress)
    return result


_TEST_SPLITS = ("male_test", "female_test")


def _decide(entities: dict[str, list[dict]], answers: dict[str, list[bool]], raters: int,
            issues: Issues) -> tuple[dict[str, bool], dict[str, list[list[bool]]]]:
    """The majority answer (True = yes) of each positive test sentence with exactly ``raters``
    answers, and the ratings per split; other items and unknown answers go to ``issues``."""
    known: dict[str, str] = {}
    decided: dict[str, bool] = {}
    per_split_ratings: dict[str, list[list[bool]]] = defaultdict(list)
    for split in _TEST_SPLITS:
        for e in entities[split]:
            for r in e["relations"]:
                if r["relation"] == "NA":
                    continue
                for text in r["sentences"]:
                    iid = item_id(e["entity_id"], r["relation"], r["tail"], text)
                    known[iid] = split
                    got = answers.get(iid)
                    if got is None:
                        continue
                    if len(got) != raters:
                        issues.add("wrong_number_of_answers", iid, f"{len(got)} answers, expected {raters}")
                        continue
                    per_split_ratings[split].append(got)
                    decided[iid] = sum(got) * 2 > raters  # majority yes
    for iid in answers:
        if iid not in known:
            issues.add("unknown_item", iid, "not a positive test sentence of this benchmark")
    return decided, per_split_ratings


def _relabel(entities: dict[str, list[dict]], decided: dict[str, bool]) -> Counter:
    """Relabel the test entities in place: majority-"no" sentences become ``NA``, decided sentences
    ``annotated``, the rest stay ``distant``; returns the number relabelled ``NA`` per split."""
    relabelled: Counter = Counter()
    for split in _TEST_SPLITS:
        for e in entities[split]:
            new_rel = []
            for r in e["relations"]:
                if r["relation"] == "NA":
                    new_rel.append({**r, "positions": []})
                    continue
                keep, yes, no = [], [], []
                for text in r["sentences"]:
                    d = decided.get(item_id(e["entity_id"], r["relation"], r["tail"], text))
                    (keep if d is None else yes if d else no).append(text)
                relabelled[split] += len(no)
                for rel, sents, source in ((r["relation"], keep, "distant"), (r["relation"], yes, "annotated"),
                                           ("NA", no, "annotated")):
                    if sents:
                        new_rel.append({"relation": rel, "tail": r["tail"], "sentences": sents,
                                        "positions": [], "source": source})
            e["relations"] = new_rel
    return relabelled


def _annotated_report(folder: Path, result: ImportResult, answer_files: list[str | os.PathLike],
                      raters: int) -> tuple[dict, str]:
    """The report and description of the relabelled benchmark: ``folder``'s own, with the
    annotation recorded (and the numbers the writer recomputes dropped)."""
    report_file = folder / "report.json"
    report = json.loads(report_file.read_text()) if report_file.is_file() else {}
    for k in ("spans", "counts", "fingerprint"):  # recomputed for the relabelled data by the writer
        report.pop(k, None)
    ann = result.to_dict()
    ann.pop("folder")
    ann["answer_files"] = [Path(p).name for p in answer_files]
    ann["raters"] = raters
    report["annotation"] = ann
    description = report.get("description", f"Benchmark from {folder.name}.") + (
        f" Test sentences relabelled from {raters} annotators' answers: majority-\"no\" sentences are NA "
        f"(source `annotated`); Fleiss' kappa {result.fleiss_kappa:.3f}, pairwise agreement "
        f"{result.pairwise_agreement:.1%} over {result.items} items.")
    return report, description
