"""No stale verdict: what a claims table was computed from, and its verdicts re-derived.

Every claims table a study writes (``claims.json``, the ``design_report`` of ``results.json``)
records :data:`wgbstats.design.DESIGN_VERSION` (``design_version``: the inference rules it was
decided under) and ``inputs`` (:func:`inputs_fingerprint`: the sha256 of every ``entity_counts.npz``
and ``eval.json`` it was computed from, paths relative to the study folder, and one sha256 over
them). :func:`recheck_file` re-derives a committed table under today's rules from its own numbers
alone, without a bootstrap: each claim's (and each intersection-union part's) p-value from its
value and standard errors (combined and seed-only), its seeds and the persons' degrees of freedom,
by the design layer's own test (:func:`p_value_of`: :func:`wgbstats.verdicts.reference_p_value`,
the seed reference of :mod:`wgbstats.reference`), the intersection-union p-value, Holm
across each family (one per population), the verdict (and, for
the main job, "not applicable" without its premises); and it re-hashes the committed count files.
It returns one line per disagreement: design version, changed or missing inputs, a p-value or a
verdict that today's rules give otherwise (claim, committed, today). An interim look (its plan not
complete) must say "interim: not decided" for every claim. ``tests/test_stale_verdicts.py`` runs it
over every committed table (:func:`committed_tables`).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from relext.evaluation.metrics import ENTITY_COUNTS
from wgbstudies.status import INTERIM, status

INPUT_FILES = (ENTITY_COUNTS, "eval.json")
#: relative tolerance of a re-derived p-value (the committed one went through JSON as a double)
P_RTOL = 1e-6


# --------------------------------------------------------------------------------------------
# Recording (at write time)
# --------------------------------------------------------------------------------------------
def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def combined_sha256(files: Mapping[str, str]) -> str:
    """One sha256 over ``{relative path: sha256}`` (sorted lines ``path<TAB>sha256``)."""
    return hashlib.sha256("".join(f"{p}\t{files[p]}\n" for p in sorted(files)).encode()).hexdigest()


def _dirs(runs: Mapping[Any, Any]) -> list[Path]:
    out = []
    for d in runs.values():
        out += [Path(x) for x in (d if isinstance(d, (list, tuple)) else [d])]
    return out


def inputs_fingerprint(runs: Mapping[Any, Any], base: str | Path) -> dict:
    """``{"files": {path relative to base: sha256}, "sha256": one over them, "n_runs"}`` of the
    count files (and ``eval.json``) of ``runs`` (key -> run directory or its fold run directories)."""
    base = os.path.abspath(base)
    files = {}
    dirs = _dirs(runs)
    for d in dirs:
        for name in INPUT_FILES:
            p = Path(d) / name
            if p.exists():
                files[Path(os.path.relpath(os.path.abspath(p), base)).as_posix()] = file_sha256(p)
    return {"files": files, "sha256": combined_sha256(files), "n_runs": len(dirs),
            "what": f"sha256 of each run's {' and '.join(INPUT_FILES)}, paths relative to the study folder"}


def stamp(report: dict, runs: Mapping[Any, Any], base: str | Path) -> dict:
    """``report`` with ``design_version`` and ``inputs`` (:func:`inputs_fingerprint`)."""
    from wgbstats.design import DESIGN_VERSION

    report["design_version"] = DESIGN_VERSION
    report["inputs"] = inputs_fingerprint(runs, base)
    return report


#: what re-deriving an estimate's p-value needs (besides its value): recorded on each claim and part
TEST_FIELDS = ("se", "se_seed", "df", "df_entity", "n_seeds", "degenerate")


def enrich(verdicts: Sequence, claims: Sequence) -> None:
    """Record on each verdict what re-deriving it needs and :class:`wgbstats.design.Verdict` does not
    hold: :data:`TEST_FIELDS` of its estimate in ``extra`` (where the verdict has no such field),
    and on each intersection-union part (``claims``: the :class:`wgbstats.design.Claim` list the
    verdicts were made of, in order)."""
    for v, c in zip(verdicts, claims):
        extra = v.extra
        for k in TEST_FIELDS:
            if getattr(v, k, None) is None:
                extra.setdefault(k, getattr(c.estimate, k, None))
        if c.parts and extra.get("parts"):
            for row, (_, e, _) in zip(extra["parts"], c.parts):
                for k in TEST_FIELDS:
                    row.setdefault(k, getattr(e, k, None))


# --------------------------------------------------------------------------------------------
# Re-deriving
# --------------------------------------------------------------------------------------------
def _num(x) -> float:
    return float("nan") if x is None else float(x)


def p_value_of(value: float, se: float, se_seed: float, n_seeds: int, df: float | None = None,
               df_entity: float | None = None) -> float:
    """An estimate's two-sided p-value from its recorded numbers, by the test the design layer
    applies to it (:func:`wgbstats.verdicts.reference_p_value`; Student's t at ``df`` where
    the layer has no other)."""
    from wgbstats import verdicts as dv

    if not hasattr(dv, "reference_p_value"):
        return dv.t_p_value(value, se, df)
    nan = float("nan")
    e = dv.Estimate(value=value, ci=[nan, nan], ci_seed=[nan, nan], ci_entity=[nan, nan], se=se, se_seed=se_seed,
                    se_entity=nan, p_value=nan, n_seeds=int(n_seeds), seeds=[], confidence=0.95, df=df,
                    **({"df_entity": df_entity} if "df_entity" in dv.Estimate.__dataclass_fields__ else {}))
    return dv.reference_p_value(e)


def _p(row: Mapping, where: str) -> tuple[float, str | None]:
    """(p-value, why degenerate) of one recorded estimate under today's rules
    (:func:`wgbstats.design.estimate_from_replicates`)."""
    from wgbstats.design import MIN_SEEDS

    missing = [k for k in ("se", "se_seed", "n_seeds") if row.get(k) is None]
    if missing:
        raise Stale(f"{where} without {' / '.join(missing)}")
    value, se, n = _num(row.get("value")), _num(row["se"]), int(row["n_seeds"])
    if n < MIN_SEEDS:
        return 1.0, f"fewer than {MIN_SEEDS} seeds"
    if not (math.isfinite(se) and se > 1e-12):
        return 1.0, "zero-width interval"
    df, df_e = row.get("df"), row.get("df_entity")
    return p_value_of(value, se, _num(row["se_seed"]), n, None if df is None else float(df),
                      None if df_e is None else float(df_e)), None


class Stale(Exception):
    pass


def _claim_test(c: Mapping) -> tuple[float, int, bool]:
    """(p-value, side, degenerate) of one committed claim, from its numbers."""
    extra = c.get("extra") or {}
    parts = extra.get("parts")
    if parts and extra.get("test") == "intersection-union":
        rows = []
        for p in parts:
            pv, deg = _p(p, f"part {p.get('part')!r} of {c['claim']!r}")
            rows.append((pv, int(p["direction"]), _num(p["value"]), deg))
        if any(r[3] for r in rows):
            return 1.0, 1, True
        with_dir = [math.copysign(1, r[2]) == r[1] and r[2] != 0 for r in rows]
        if all(with_dir):
            return max(r[0] for r in rows), 1, False
        against = [r[0] for r, ok in zip(rows, with_dir) if not ok]
        return min(1.0, len(rows) * min(against)), -1, False
    row = {"value": c["value"], "n_seeds": c.get("n_seeds"),
           **{k: c[k] if c.get(k) is not None else extra.get(k) for k in ("se", "se_seed", "df", "df_entity")}}
    pv, deg = _p(row, f"claim {c['claim']!r}")
    value = _num(c["value"])
    side = 1 if (value > 0 and c["direction"] == 1) or (value < 0 and c["direction"] == -1) else -1
    return pv, side, deg is not None


def _close(a, b) -> bool:
    a, b = _num(a), _num(b)
    return a == b or abs(a - b) <= P_RTOL * max(abs(a), abs(b)) + 1e-15


def recheck_family(claims: Sequence[Mapping], *, alpha: float, interim: bool = False,
                   where: str = "") -> list[str]:
    """The disagreements of one family (Holm across it) with today's rules."""
    from wgbstats.verdicts import adjust

    if not claims:
        return []
    try:
        tests = [_claim_test(c) for c in claims]
    except Stale as exc:
        return [f"{where}{exc}: cannot be re-derived"]
    method = claims[0].get("correction", "holm")
    adj = adjust([t[0] for t in tests], method)
    out = []
    new_verdicts = {}
    for c, (p, side, deg), pa in zip(claims, tests, adj):
        decided = pa < alpha and not deg
        v = ("supported" if side == 1 else "contradicted") if decided else "undecided"
        new_verdicts[c.get("id", c["claim"])] = v
        if not _close(c.get("p_value"), p):
            out.append(f"{where}p-value differs: {c['claim']!r}: committed {_num(c.get('p_value')):.6g}, "
                       f"today {p:.6g}")
        if not _close(c.get("p_adjusted"), pa):
            out.append(f"{where}adjusted p differs: {c['claim']!r}: committed {_num(c.get('p_adjusted')):.6g}, "
                       f"today {pa:.6g}")
    for c in claims:
        v = new_verdicts[c.get("id", c["claim"])]
        failed = [x for x in c.get("premises") or [] if new_verdicts.get(x) != "supported"]
        if failed:
            v = "not applicable"
        if interim:
            v = INTERIM
        if c["verdict"] != v:
            out.append(f"{where}verdict differs: {c['claim']!r}: committed {c['verdict']}, today {v}")
    return out


def _families(rep: Mapping) -> list[tuple[str, list]]:
    fams = [(rep.get("population") or "main", rep.get("claims") or [])]
    for name, r in (rep.get("populations") or {}).items():
        fams.append((name, r.get("claims") or []))
    return fams


def recheck_inputs(inputs: Mapping | None, base: Path) -> list[str]:
    """The fingerprint's files re-hashed: changed, missing, or a listing that does not add up."""
    if not inputs or not isinstance(inputs.get("files"), dict):
        return ["no input fingerprint (inputs): the count files it was computed from are unknown"]
    files = inputs["files"]
    out = []
    if combined_sha256(files) != inputs.get("sha256"):
        out.append("input fingerprint does not add up (its sha256 is not the one of its files)")
    missing = [p for p in files if not (base / p).is_file()]
    changed = [p for p in files if (base / p).is_file() and file_sha256(base / p) != files[p]]
    for what, ps in (("input files missing", missing), ("counts changed", changed)):
        if ps:
            out.append(f"{what}: {len(ps)} of {len(files)} files, e.g. {ps[0]}")
    return out


def _version_problem(rep: Mapping) -> str | None:
    from wgbstats.design import DESIGN_VERSION

    v = rep.get("design_version")
    if v is None:
        return (f"design version 1 (no design_version: decided under percentile-bootstrap p-values; today's "
                f"rules are version {DESIGN_VERSION})")
    if v != DESIGN_VERSION:
        return f"design version {v} (today's rules are version {DESIGN_VERSION})"
    return None


def recheck_report(rep: Mapping, base: Path, *, with_inputs: bool = True) -> list[str]:
    """A design report (``claims.json`` or ``results.json``'s ``design_report``) against today's rules."""
    problem = _version_problem(rep)
    if problem:
        return [problem]
    out = recheck_inputs(rep.get("inputs"), base) if with_inputs else []
    alpha = float((rep.get("design") or {}).get("alpha", 0.05))
    plan = rep.get("plan") or {}
    for name, claims in _families(rep):
        out += recheck_family(claims, alpha=alpha, interim=bool(plan.get("interim")),
                              where=f"[{name}] " if rep.get("populations") else "")
    if (base / "plan.json").is_file():
        on_disk = json.loads((base / "plan.json").read_text())
        if plan.get("claims_sha256") != on_disk.get("claims_sha256"):
            out.append("made under another plan than plan.json's (claims_sha256 differs)")
        seeds = (rep.get("design") or {}).get("seeds") or rep.get("seeds") or {}
        want = status(on_disk, seeds)
        if bool(plan.get("interim")) != want["interim"]:
            out.append(f"interim status differs: the table says {'interim' if plan.get('interim') else 'final'}, "
                       f"its seeds against plan.json: {want['label']}")
    return out


def recheck_main_job(report: Mapping, base: Path) -> list[str]:
    """``wgb run``'s report.json: its claims (``analysis.verdicts``: Holm across them, premises)."""
    a = report.get("analysis") or {}
    rep = {"design_version": a.get("design_version", report.get("design_version")),
           "inputs": a.get("inputs", report.get("inputs"))}
    problem = _version_problem(rep)
    if problem:
        return [problem]
    out = []
    if rep["inputs"] and rep["inputs"].get("files"):
        out += recheck_inputs(rep["inputs"], base)
    return out + recheck_family(a.get("verdicts") or [], alpha=float(a.get("alpha", 0.05)))


def recheck_protocols(p: Mapping, root: Path) -> list[str]:
    """``protocols.json`` (scripts/study/crossfit_report.py): each verdict it shows must be the one
    of the claims table it was copied from."""
    out = []
    sources = {"test_protocol": (p.get("test_protocol") or {}).get("source"),
               "crossfit": (p.get("crossfit") or {}).get("source")}
    loaded = {}
    for k, src in sources.items():
        if not src:
            continue
        path = root / src
        if not path.is_file():
            out.append(f"its source {src} is missing")
            continue
        d = json.loads(path.read_text())
        loaded[k] = d.get("design_report", d) if "claims" not in d else d
    cols = {"test_protocol": ("test_protocol", None), "crossfit_test": ("crossfit", None),
            "crossfit_all": ("crossfit", "all")}
    for row in p.get("rows", []):
        for col, (src, pop) in cols.items():
            got = row.get(col) or {}
            if not got or src not in loaded:
                continue
            rep = loaded[src]
            claims = (rep.get("claims", []) if pop is None
                      else (rep.get("populations") or {}).get(pop, {}).get("claims", []))
            want = next((c for c in claims if c["claim"] == row["claim"]), None)
            if want is None:
                out.append(f"{col}: {row['claim']!r} is not in {sources[src]}")
            elif want["verdict"] != got.get("verdict"):
                out.append(f"{col}: verdict differs from {sources[src]}: {row['claim']!r}: shown {got.get('verdict')}, "
                           f"source {want['verdict']}")
    return out


def recheck_file(path: str | Path, root: str | Path) -> list[str]:
    """The disagreements of one committed file with today's rules (empty: not stale)."""
    path, root = Path(path), Path(root)
    d = json.loads(path.read_text())
    base = path.parent
    if path.name == "protocols.json":
        return recheck_protocols(d, root)
    if path.name == "report.json" and "analysis" in d:
        return recheck_main_job(d, base)
    rep = d.get("design_report") if path.name == "results.json" else d
    if not rep or not rep.get("claims"):
        return []
    return recheck_report(rep, base)


def _has_claims(path: Path) -> bool:
    try:
        d = json.loads(path.read_text())
    except (OSError, ValueError):
        return True     # unreadable: let recheck_file say so
    if path.name == "results.json":
        return bool((d.get("design_report") or {}).get("claims"))
    if path.name == "report.json":
        return bool((d.get("analysis") or {}).get("verdicts"))
    return bool(d.get("claims") or d.get("rows"))


def committed_tables(root: str | Path) -> list[Path]:
    """Every claims table under ``root/results`` (run folders aside): ``claims.json``,
    ``results.json`` with a design report's claims, ``protocols.json`` and the main job's
    ``report.json``."""
    root = Path(root)
    out = []
    for pattern in ("claims.json", "results.json", "protocols.json", "report.json"):
        for p in sorted((root / "results").rglob(pattern)):
            if "runs" in p.relative_to(root).parts:
                continue
            if _has_claims(p):
                out.append(p)
    return sorted(out)


def recheck_all(root: str | Path, paths: Iterable[Path] | None = None) -> dict[str, list[str]]:
    """{file relative to root: its problems} of every stale table (:func:`committed_tables`)."""
    root = Path(root)
    out = {}
    for p in (paths if paths is not None else committed_tables(root)):
        try:
            problems = recheck_file(p, root)
        except (ValueError, KeyError, TypeError) as exc:
            problems = [f"unreadable as a claims table ({type(exc).__name__}: {exc})"]
        if problems:
            out[Path(p).relative_to(root).as_posix() if Path(p).is_relative_to(root) else str(p)] = problems
    return out
