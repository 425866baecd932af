"""Benchmark statistics and the paper's "further analysis" (spouse and hypernym mentions by gender)."""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wgbcore.atomicio import atomic_savefig

from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS

_COLUMNS = ["entity_id", "head", "tail", "relation", "gender", "sentence_id", "tail_match"]


def _frame(dsdict) -> pd.DataFrame:
    frames = []
    for split in SPLITS:
        ds = dsdict[split].select_columns(_COLUMNS)
        df = ds.to_pandas()
        df["relation"] = [RELATIONS[i] for i in df["relation"]]
        df["gender"] = [GENDERS[i] for i in df["gender"]]
        df["split"] = split
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def _mean_ci(x: np.ndarray) -> dict[str, float]:
    """Mean with a 95% normal-approximation interval."""
    n = len(x)
    if n == 0:
        return {"mean": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0}
    m = float(np.mean(x))
    se = float(np.std(x, ddof=1) / math.sqrt(n)) if n > 1 else 0.0
    return {"mean": m, "ci_low": m - 1.96 * se, "ci_high": m + 1.96 * se, "n": int(n)}


@dataclass
class BenchmarkStats:
    """Counts per split x gender x relation and the further analysis of mentions by gender."""

    counts: list[dict[str, Any]]
    further_analysis: dict[str, Any]
    source: str
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(_clean(asdict(self)), indent=2, allow_nan=False) + "\n"

    def to_markdown(self) -> str:
        lines = [f"# WikiGenderBias statistics\n\nSource: `{self.source}`\n",
                 "| split | gender | relation | entities | sentences | bags | mean bag size | max bag size |",
                 "|---|---|---|---|---|---|---|---|"]
        for c in self.counts:
            lines.append(f"| {c['split']} | {c['gender']} | {c['relation']} | {c['entities']} | {c['sentences']} | "
                         f"{c['bags']} | {c['bag_size_mean']:.2f} | {c['bag_size_max']} |")
        lines.append("\n## Further analysis (paper, section 3.1)\n")
        lines.append("| relation | gender | articles | articles mentioning it | sentences per article (95% CI) | "
                     "share of the article's sentences |")
        lines.append("|---|---|---|---|---|---|")
        for rel, per_g in self.further_analysis["per_relation"].items():
            for g in GENDERS:
                b = per_g[g]
                s = b["sentences_per_article"]
                lines.append(f"| {rel} | {g} | {b['articles']} | {b['articles_mentioning']} "
                             f"({b['mention_rate']:.1%}) | {s['mean']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}] | "
                             f"{b['share_of_sentences']['mean']:.1%} |")
            lines.append(f"| {rel} | female − male | | | {per_g['difference']['sentences_per_article']:+.2f} "
                         f"(Mann-Whitney p = {per_g['difference']['mann_whitney_p']:.2g}) | "
                         f"{per_g['difference']['share_of_sentences']:+.1%} |")
        lines += ["", *[f"- {n}" for n in self.notes]]
        return "\n".join(lines) + "\n"


def _clean(o: Any) -> Any:
    """NaN -> None, recursively (JSON has no NaN)."""
    if isinstance(o, float) and math.isnan(o):
        return None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_clean(v) for v in o]
    return o


def compute_stats(dsdict, *, source: str = "embedded release") -> BenchmarkStats:
    """Statistics of a ``sentences`` DatasetDict (the output of ``wikigenderbias.load()``)."""
    from scipy.stats import mannwhitneyu

    df = _frame(dsdict)
    counts = []
    for (split, gender, relation), g in df.groupby(["split", "gender", "relation"], sort=False):
        bag_sizes = g.groupby(["entity_id", "tail"]).size().to_numpy()
        counts.append({
            "split": split, "gender": gender, "relation": relation,
            "entities": int(g["entity_id"].nunique()),
            "sentences": int(len(g)),
            "bags": int(len(bag_sizes)),
            "bag_size_mean": float(bag_sizes.mean()),
            "bag_size_median": float(np.median(bag_sizes)),
            "bag_size_max": int(bag_sizes.max()),
        })
    order = {s: i for i, s in enumerate(SPLITS)}
    counts.sort(key=lambda c: (order[c["split"]], GENDERS.index(c["gender"]), RELATIONS.index(c["relation"])))

    # Further analysis: per article (head entity), how many of its sentences mention the spouse /
    # the hypernym (tail located), among articles that have that relation in the data.
    per_article_sentences = df.groupby("entity_id")["sentence_id"].nunique()
    genders = df.groupby("entity_id")["gender"].first()
    further: dict[str, Any] = {}
    for rel in ("spouse", "hypernym"):
        sub = df[(df["relation"] == rel) & (df["tail"] != "")]
        has_rel = sub.groupby("entity_id")["tail"].first().index
        located = sub[sub["tail_match"] != "none"].groupby("entity_id")["sentence_id"].nunique()
        n_sent = located.reindex(has_rel, fill_value=0)
        share = n_sent / per_article_sentences.reindex(has_rel)
        per_g: dict[str, Any] = {}
        for g in GENDERS:
            ids = [e for e in has_rel if genders[e] == g]
            x = n_sent.loc[ids].to_numpy(dtype=float)
            per_g[g] = {
                "articles": len(ids),
                "articles_mentioning": int((x > 0).sum()),
                "mention_rate": float((x > 0).mean()) if len(x) else float("nan"),
                "sentences_per_article": _mean_ci(x),
                "share_of_sentences": _mean_ci(share.loc[ids].to_numpy(dtype=float)),
            }
        xf = n_sent.loc[[e for e in has_rel if genders[e] == "female"]].to_numpy()
        xm = n_sent.loc[[e for e in has_rel if genders[e] == "male"]].to_numpy()
        p = float(mannwhitneyu(xf, xm).pvalue) if len(xf) and len(xm) else float("nan")
        per_g["difference"] = {
            "sentences_per_article": per_g["female"]["sentences_per_article"]["mean"]
            - per_g["male"]["sentences_per_article"]["mean"],
            "share_of_sentences": per_g["female"]["share_of_sentences"]["mean"]
            - per_g["male"]["share_of_sentences"]["mean"],
            "mann_whitney_p": p,
        }
        further[rel] = per_g
    notes = [
        "An article's sentences are the distinct sentences of that person in the benchmark (the release keeps "
        "only sentences that mention some tail, not whole articles).",
        "A sentence mentions the spouse/hypernym when this toolkit located the tail in it (tail_match != none).",
        "The release keeps only persons with all four relations, so every article has spouse information; the "
        "comparison is therefore how much of a female vs male article is about the spouse / the hypernym.",
    ]
    return BenchmarkStats(counts=counts, further_analysis={"per_relation": further}, source=source, notes=notes)


def plot_stats(stats: BenchmarkStats, path: str | os.PathLike) -> Path:
    """A PNG: sentences per article by relation and gender, and the further analysis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rels = list(RELATIONS[1:])
    width = 0.38
    colors = {"female": "#c0504d", "male": "#4f81bd"}
    for k, g in enumerate(GENDERS):
        sent = [sum(c["sentences"] for c in stats.counts if c["gender"] == g and c["relation"] == r) for r in rels]
        ents = max(1, max(sum(c["entities"] for c in stats.counts if c["gender"] == g and c["relation"] == r)
                          for r in rels))
        axes[0].bar(np.arange(len(rels)) + (k - 0.5) * width, np.array(sent) / ents, width, label=g, color=colors[g])
    axes[0].set_xticks(np.arange(len(rels)), rels)
    axes[0].set_ylabel("sentences per article (all splits)")
    axes[0].set_title("Examples per relation and gender")
    axes[0].legend()
    fa = stats.further_analysis["per_relation"]
    labels = list(fa)
    for k, g in enumerate(GENDERS):
        m = [fa[r][g]["share_of_sentences"]["mean"] for r in labels]
        lo = [fa[r][g]["share_of_sentences"]["mean"] - fa[r][g]["share_of_sentences"]["ci_low"] for r in labels]
        axes[1].bar(np.arange(len(labels)) + (k - 0.5) * width, m, width, yerr=lo, capsize=4, label=g, color=colors[g])
    axes[1].set_xticks(np.arange(len(labels)), [f"mentions {r}" for r in labels])
    axes[1].set_ylabel("share of the article's sentences (95% CI)")
    axes[1].set_title("Further analysis: spouse and hypernym mentions")
    axes[1].legend()
    fig.suptitle(f"WikiGenderBias ({stats.source})")
    fig.tight_layout()
    return _atomic_savefig(fig, path)


def _atomic_savefig(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    try:
        return atomic_savefig(path, fig, dpi=120)
    finally:
        plt.close(fig)
