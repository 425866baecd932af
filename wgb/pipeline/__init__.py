"""The end-to-end job behind `wgb run`: extraction bias -> knowledge graph -> embedding bias.

Every seed runs the stages below in its own sub-folder ``out/seed-<s>/`` (each stage writes files
there and a marker in ``out/seed-<s>/stages/`` when done, so an interrupted run resumes where it
stopped, seed by seed; the trainers themselves also resume mid-way):

1. ``extractors/<variant>``: train the baseline extractor and the debiased one(s) (relext).
2. ``extractors/<variant>/eval.json``: per-relation F1 by gender, F1 gap and equality of
   opportunity with bootstrap intervals.
3. ``triples/<graph>.jsonl``: knowledge-graph triples of the held-out articles (the test splits)
   from the gold labels and from each extractor (``wgb re extract``'s format).
4. ``embeddings/<graph>``: a KGE model trained on each graph (+ each person's gender, optionally
   FB13 as background knowledge).
5. ``bias/<graph>.json``: the kge bias measures on each graph (gender: male vs female; target:
   the hypernym relation, the benchmark's occupation-like relation).
6. ``out/report/``, pooled over the seeds: ``report.html`` (self-contained), ``report.md``,
   ``report.json`` and charts; verdicts first, then the evidence, every estimate with an interval
   over seeds and test entities (:mod:`~wgb.pipeline.propagation`).

Modules: :mod:`~wgb.pipeline.config` (profiles, :class:`PipelineConfig`), :mod:`~wgb.pipeline.stages`
(the resumable stages and :func:`run_pipeline`), :mod:`~wgb.pipeline.gold` (the gold graph),
:mod:`~wgb.pipeline.linking` (FB13 background knowledge), :mod:`~wgb.pipeline.coverage` (graphs vs
the gold graph), :mod:`~wgb.pipeline.propagation` (the pooled estimates and verdicts), :mod:`~wgb.pipeline.seed_stability`
(the items over embedding seeds),
:mod:`~wgb.pipeline.report` (charts; the templates are ``wgb/templates/run_report.*``).
"""
from __future__ import annotations

from wgb.pipeline.config import (DEFAULT_MEASURES, GENDER_RELATION, MIN_COUNT, PROFILES, TARGET_RELATION,
                                 TEST_SPLITS, PipelineConfig, parse_overrides)
from wgb.pipeline.coverage import bias_items, kg_coverage
from wgb.pipeline.gold import gold_triples
from wgb.pipeline.linking import FB13_RELATION_MAP, link_to_fb13
from wgb.pipeline.report import write_report
from wgb.pipeline.stages import RunResult, Stages, run_pipeline, seed_dir

__all__ = ["DEFAULT_MEASURES", "GENDER_RELATION", "MIN_COUNT", "PROFILES", "TARGET_RELATION", "TEST_SPLITS",
           "PipelineConfig", "parse_overrides", "bias_items", "kg_coverage", "gold_triples", "FB13_RELATION_MAP",
           "link_to_fb13", "write_report", "RunResult", "Stages", "run_pipeline", "seed_dir"]
