"""Cost and quality of the dataset debiasers on the real WikiGenderBias release.

Measured, on the embedded release (real data):

* NER throughput of the anonymizer's configuration (spaCy English pipeline with only ``ner``
  enabled, on the dataset's own tokens, ``nlp.pipe`` in batches) against the peer: the same
  pipeline with every component enabled (``spacy.load(model)``, what a plain script does), on
  the same ``--sample`` distinct training sentences, cold caches; sentences/s and the ratio.
* Anonymization of all splits with the NER cache filled (what every study run after the first
  pays) and CDA of train + validation: seconds and counts.
* CDA's rule for "her" (his/him from the next token) against the spaCy tagger (PRP$ -> his,
  else him) on ``--her-sample`` training sentences containing "her": agreement and confusion.

Results: benchmarks/results/debias_transforms.{json,md}. Needs an English spaCy pipeline
(``pip install 'wgb[ner]'``); the NER cache used for the anonymization figure is the user's
(``$WGB_CACHE/spacy``), filled by the first anonymization.

    python benchmarks/debias_transforms.py
    python benchmarks/debias_transforms.py --sample 300 --her-sample 300   # a quick try
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=1000, help="sentences for the NER throughput comparison")
    ap.add_argument("--her-sample", type=int, default=1500, help="sentences with 'her' for the rule check")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()

    import spacy
    import torch
    from spacy.tokens import Doc

    import wikigenderbias
    from relext.debias import spacy_pipeline
    from relext.debias.anonymize import Anonymize
    from relext.debias.cda import CDA
    from relext.debias.base import package_version

    torch.set_num_threads(2)
    models = spacy_pipeline.installed_models()
    if not models:
        raise SystemExit("no English spaCy pipeline installed: pip install 'wgb[ner]'")
    ds = wikigenderbias.load(config="sentences")
    rng = random.Random(args.seed)
    uniq = spacy_pipeline.iter_unique(ds["train"]["tokens"])
    sample = rng.sample(uniq, min(args.sample, len(uniq)))
    n_tok = sum(len(t) for t in sample)
    res: dict = {"machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                             "loadavg_start": [round(x, 2) for x in os.getloadavg()]},
                 "wgb": package_version(), "spacy": spacy.__version__, "model": models[0]}

    # ---- NER throughput: ours (ner only, pre-tokenized, batched) vs the full pipeline
    with tempfile.TemporaryDirectory() as tmp:
        ann = spacy_pipeline.SpacyAnnotator(task="ner", cache_dir=tmp, progress=False)
        t0 = time.perf_counter()
        ann.annotate(sample)
        ours = time.perf_counter() - t0
    nlp_full = spacy.load(models[0])
    t0 = time.perf_counter()
    for _ in nlp_full.pipe((Doc(nlp_full.vocab, words=list(t)) for t in sample), batch_size=256):
        pass
    peer = time.perf_counter() - t0
    res["ner_throughput"] = {
        "sentences": len(sample), "tokens": n_tok,
        "ours": {"components": ann.info["components"], "seconds": round(ours, 2),
                 "sentences_per_s": round(len(sample) / ours, 1), "tokens_per_s": round(n_tok / ours)},
        "peer_full_pipeline": {"components": list(nlp_full.pipe_names), "seconds": round(peer, 2),
                               "sentences_per_s": round(len(sample) / peer, 1)},
        "speedup": round(peer / ours, 2),
        "projected_minutes_all_distinct_sentences": round(
            len(spacy_pipeline.iter_unique([t for s in ds for t in ds[s]["tokens"]])) / (len(sample) / ours) / 60, 1),
    }

    # ---- anonymization with the user's NER cache (filled by the first run) and CDA
    an = Anonymize()
    t0 = time.perf_counter()
    an.transform_dataset(ds)
    res["anonymize"] = {"seconds": round(time.perf_counter() - t0, 2), "describe": an.describe()}
    cda = CDA()
    t0 = time.perf_counter()
    cda.transform_dataset(ds)
    res["cda"] = {"seconds": round(time.perf_counter() - t0, 2), "describe": cda.describe()}

    # ---- the "her" rule against the tagger
    withher = [s for s in uniq if any(w.lower() == "her" for w in s)]
    hs = rng.sample(withher, min(args.her_sample, len(withher)))
    with tempfile.TemporaryDirectory() as tmp:
        tags = spacy_pipeline.SpacyAnnotator(task="tag", cache_dir=tmp, progress=False).annotate(hs)
    confusion: dict[str, int] = {}
    agree = total = 0
    for toks, tg in zip(hs, tags):
        for i, w in enumerate(toks):
            if w.lower() != "her":
                continue
            rule = cda.swap_word(w, toks[i + 1] if i + 1 < len(toks) else None).lower()
            tag = "his" if tg[i] == "PRP$" else "him"
            key = f"rule={rule} tagger={tag}"
            confusion[key] = confusion.get(key, 0) + 1
            agree += rule == tag
            total += 1
    res["her_rule_vs_tagger"] = {"train_sentences_with_her": len(withher), "sentences": len(hs),
                                 "her_tokens": total, "agreement": round(agree / max(total, 1), 4),
                                 "confusion": confusion}
    res["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]

    args.out.mkdir(parents=True, exist_ok=True)
    tmpj = args.out / ".debias_transforms.json.tmp"
    tmpj.write_text(json.dumps(res, indent=1, default=str))
    os.replace(tmpj, args.out / "debias_transforms.json")
    nt, a, c, h = res["ner_throughput"], res["anonymize"], res["cda"], res["her_rule_vs_tagger"]
    st = a["describe"]["stats"]["train"]
    md = [
        "# Dataset debiasers on the real WikiGenderBias release", "",
        f"Machine: {res['machine']['cpu_count']} CPUs shared with other jobs; load average "
        f"{res['machine']['loadavg_start']} at the start, {res['machine']['loadavg_end']} at the end. "
        f"spaCy {res['spacy']}, pipeline {res['model']}, wgb {res['wgb']}.", "",
        "| what | figure |", "|---|---|",
        f"| NER, ours (ner only, batched, pre-tokenized) | {nt['ours']['sentences_per_s']} sentences/s "
        f"({nt['ours']['tokens_per_s']} tokens/s) on {nt['sentences']} sentences |",
        f"| NER, peer (full pipeline {nt['peer_full_pipeline']['components']}) | "
        f"{nt['peer_full_pipeline']['sentences_per_s']} sentences/s |",
        f"| speed-up over the peer | {nt['speedup']}x |",
        f"| projected cold NER of every distinct sentence | {nt['projected_minutes_all_distinct_sentences']} min (once; cached) |",
        f"| anonymization of all splits, NER cached | {a['seconds']} s |",
        f"| train: rows changed / spans replaced / persons per article | {st['rows_changed']}/{st['rows']} / "
        f"{st['spans_replaced']} / {st['persons'] / st['articles']:.2f} |",
        f"| CDA of train + validation | {c['seconds']} s |",
        f"| 'her' rule vs tagger | {h['agreement']:.1%} agreement on {h['her_tokens']} tokens |",
        "", f"Confusion (rule vs tagger): {h['confusion']}", "",
    ]
    (args.out / "debias_transforms.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
