"""The sections of the dataset card that only a build (`wgb data build`) has, generated from the
build's ``report.json``: its sources, its selection rules, what is missing from it, and its known
defects (with the build's own counts). :func:`wikigenderbias.card.render_card` puts them in place.
"""
from __future__ import annotations

from typing import Any

from wikigenderbias.schema import MATCH_KINDS, POSITIVE_RELATIONS

#: Match kinds that locate dates (the year alone only when asked).
_DATE_KINDS = ("date", "date_partial", "year")


def _n(x: Any) -> str:
    return f"{x:,}" if isinstance(x, int) else str(x)


def _list(items) -> str:
    items = [str(i) for i in items]
    return ", ".join(f"`{i}`" for i in items) if items else "none"


def _distant(report: dict[str, Any]) -> dict[str, Any]:
    return (report.get("config") or {}).get("distant") or {}


def build_sections(report: dict[str, Any]) -> str:
    """Sources, rules and what is missing: the sections between the statistics and "How it was
    built"."""
    return _sources(report) + _rules(report) + _missing(report)


def _sources(report: dict[str, Any]) -> str:
    cfg = report.get("config") or {}
    db, wiki = report.get("dbpedia") or {}, report.get("wikipedia") or {}
    split = cfg.get("split") or {}
    lines = [
        f"- wgb version: `{report.get('wgb_version', 'unknown')}`.",
        f"- DBpedia files: {_list(db.get('files', []))} ({_n(db.get('persons', 0))} persons with a gender and "
        f"all of {_list(cfg.get('require', POSITIVE_RELATIONS))}).",
        f"- Wikipedia dump: {_list(wiki.get('files', []))} ({_n(wiki.get('parts', 0))} part(s); "
        f"{_n(wiki.get('articles', 0))} articles read of {_n(wiki.get('pages', 0))} pages).",
        f"- Splits by head entity: train {split.get('train')}, validation {split.get('validation')}, "
        f"test {split.get('test')} (divided into `male_test` and `female_test`"
        f"{', balanced' if split.get('balance_test') else ''}), seed {split.get('seed')}.",
    ]
    return "\n## Sources\n\n" + "\n".join(lines) + "\n"


def _rules(report: dict[str, Any]) -> str:
    d = _distant(report)
    head_kinds = [k for k in d.get("head_kinds", MATCH_KINDS) if k not in _DATE_KINDS and k != "inflected"]
    tail_kinds = d.get("tail_kinds", [])
    head = ("a sentence is an example only if it also names the person (`--require-head`, stricter than the "
            "paper's rule)" if d.get("require_head", True)
            else "a sentence need not name the person (the paper's rule: any sentence of the person's article "
                 "that mentions the tail)")
    if d.get("pronouns"):
        head += "; a gendered pronoun of the person's gender counts as naming the person"
    limit = f", at most {d['max_tokens']}" if d.get("max_tokens") else ""
    lines = [
        f"- Positive relations: {_list(d.get('relations', POSITIVE_RELATIONS))}; `NA` examples from the tails of "
        f"{_list(d.get('na_facts', []))} in sentences that mention no positive tail.",
        f"- The person: {head}. Its mentions: rules {_list(head_kinds)}; a later comma part of the name that is "
        "a title counts whole (\"Zaifeng, Prince Chun\" -> \"Prince Chun\"), the territory of a title never "
        "alone.",
        f"- The tail: rules {_list(tail_kinds)}"
        + ("" if "year" in tail_kinds else " (the year of a date alone does not count)")
        + ". Names, places and labels are also found inside compound tokens (\"Belgrade-based\", "
          "\"Actor/Philanthropist\"). A spouse who shares the person's surname is found by the other parts "
          "of the spouse's name only; a tail inside the person's own name (a hypernym \"Emperor\" in "
          "\"Qianlong Emperor\") is not a mention of the tail.",
        f"- Sentences of at least {d.get('min_tokens', 3)} tokens{limit}.",
    ]
    return "\n## Selection rules\n\n" + "\n".join(lines) + "\n"


def _missing(report: dict[str, Any]) -> str:
    p = report.get("persons") or {}
    dist = report.get("distant") or {}
    lines = []
    if p:
        first = p.get("first_without_article") or []
        lines.append(f"- {_n(p.get('without_article', 0))} of {_n(p.get('indexed', 0))} indexed persons have no "
                     f"article in the given dump" + (f" (first: {', '.join(first)})" if first else "") + ".")
        lines.append(f"- {_n(p.get('without_examples', 0))} persons with an article have no positive example "
                     "(no sentence names a tail of theirs) and are not in the benchmark.")
    g = report.get("genders") or {}
    if g:
        by = g.get("outside_binary_splits_by_class") or {}
        lines.append(f"- Gender values, every one kept (raw values in `report.json`): indexed persons "
                     + ", ".join(f"{c} {_n(n)}" for c, n in (g.get("indexed") or {}).items() if n) + f"; "
                     f"{_n(g.get('outside_binary_splits', 0))} persons with examples whose gender is neither female "
                     "nor male are excluded from the binary splits and the binary gap"
                     + (f" ({', '.join(f'{c} {_n(n)}' for c, n in by.items())}; their records: "
                        f"`{g.get('outside_binary_splits_file')}`)" if by else "") + ".")
    rels = [r for r in POSITIVE_RELATIONS if f"tails:{r}" in dist]
    if rels:
        parts = [f"{r} {_n(dist.get(f'tails_not_mentioned:{r}', 0))} of {_n(dist[f'tails:{r}'])}" for r in rels]
        lines.append("- Tails never mentioned in their person's article (no example for them): "
                     + ", ".join(parts) + ".")
    na = {k.split(":", 1)[1]: v for k, v in dist.items() if k.startswith("na_tails:")}
    if na:
        lines.append("- NA tails of the persons in the benchmark: "
                     + ", ".join(f"{f} {_n(v)}" for f, v in sorted(na.items())) + ".")
    skipped = {**{f"DBpedia {k}": v.get("count", 0) for k, v in ((report.get("dbpedia") or {}).get("skipped") or {}).items()},
               **{f"Wikipedia {k}": v.get("count", 0) for k, v in ((report.get("wikipedia") or {}).get("skipped") or {}).items()}}
    if skipped:
        lines.append("- Skipped input (details in `report.json`): "
                     + ", ".join(f"{k} {_n(v)}" for k, v in sorted(skipped.items())) + ".")
    return "\n## What is missing\n\n" + ("\n".join(lines) if lines else "- Nothing recorded.") + "\n"


def build_defects(report: dict[str, Any]) -> str:
    """The known defects of a build, with its own counts (after the "Known defects" heading)."""
    d = _distant(report)
    dist = report.get("distant") or {}
    lines = [
        "- Labels come from distant supervision: a sentence that mentions the tail (and, with `--require-head`, the "
        "person) is taken to express the relation, which is often wrong (e.g. a birth place that is only "
        "mentioned as a later residence). No sentence of this build was checked by people unless `source` "
        "is `annotated`.",
    ]
    if d.get("require_head", True) and not d.get("pronouns"):
        lines.append("- Sentences that name the person only by a pronoun (\"She married ...\") are not examples "
                     "(`--pronouns` keeps them, and so does a build without `--require-head`).")
    else:
        lines.append("- Sentences may name the person only by a pronoun or not at all: their head span is "
                     "`[-1, -1]`.")
    noise = dist.get("tails_name_word:hypernym", 0)
    lines.append(f"- Hypernyms come from the Linked Hypernyms Dataset and include noise: {_n(noise)} hypernym(s) "
                 "of persons in this build are a word of the person's own name (a surname, \"United\"); their "
                 "mentions inside the name are not taken for the hypernym.")
    lines.append("- `NA` examples are few (sentences mentioning a parent, death date or alma mater and no "
                 "positive tail) and most entities have none.")
    return "\n" + "\n".join(lines) + "\n"
