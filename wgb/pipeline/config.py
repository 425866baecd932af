"""What a `wgb run` does: the profiles (sizes of every stage) and :class:`PipelineConfig`."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
import os
from pathlib import Path
from typing import Any, Mapping

from wgbcore.config import check_finite, parse_overrides

__all__ = ["PROFILES", "DEFAULT_MEASURES", "TEST_SPLITS", "GENDER_RELATION", "TARGET_RELATION", "MIN_COUNT",
           "PipelineConfig", "parse_overrides"]

PROFILES: dict[str, dict[str, Any]] = {
    # seconds, for the test suite: tiny models on whatever (small) dataset is given
    "tiny": {"re_epochs": 1, "word_dim": 16, "hidden": 16, "w2v_epochs": 1, "kge_dim": 16, "kge_epochs": 5,
             "n_resamples": 50, "kge_batch_size": 256},
    # one seed in minutes: the measured time and load in results/wgb_run/quick/run.json (README)
    "quick": {"re_epochs": 3, "word_dim": 50, "hidden": 230, "w2v_epochs": 5, "kge_dim": 50, "kge_epochs": 200,
              "n_resamples": 1000, "kge_batch_size": 1024},
    # the documented full run: cross-fitted over every person of the benchmark by default; its
    # extractors are the debiasing study's (10 epochs, patience 3), so fold runs are shared
    "full": {"re_epochs": 10, "word_dim": 50, "hidden": 230, "w2v_epochs": 5, "kge_dim": 100, "kge_epochs": 1000,
             "n_resamples": 1000, "kge_batch_size": 1024},
}
#: The protocol of each profile when none is asked for (relext.protocols.crossfit).
DEFAULT_PROTOCOL = {"tiny": "test", "quick": "test", "full": "crossfit"}
DEFAULT_MEASURES = ("data", "fisher", "bourli_projection")
TEST_SPLITS = ("male_test", "female_test")
GENDER_RELATION = "gender"
TARGET_RELATION = "hypernym"
#: Items held by fewer persons than this are left out of the report's item tables.
MIN_COUNT = 5


@dataclass
class PipelineConfig:
    profile: str = "quick"
    seed: int = 0                         # the seed of one run; a study of several: ``seeds``
    seeds: list[int] | None = None        # several seeds (each in its own sub-folder); None = [seed]
    dataset: str | None = None            # benchmark folder; None = the embedded release
    encoder: str = "pcnn"
    selector: str = "attention"
    debias: list[str] = field(default_factory=lambda: ["cda"])
    kge_model: str = "transe"
    kge_engine: str = "ours"              # "pbg": embeddings trained by PyTorch-BigGraph (kge.pbg)
    measures: list[str] = field(default_factory=lambda: list(DEFAULT_MEASURES))
    link_fb13: bool = False
    min_score: float = 0.0
    threads: int | None = None
    min_count: int = MIN_COUNT            # item tables of the report: items held by at least this many persons
    overrides: dict[str, Any] = field(default_factory=dict)   # profile values to change
    # person-level cross-fitting (relext.protocols.crossfit): None = the profile's default protocol
    protocol: str | None = None          # "test": the release's test persons; "crossfit": every person
    folds: int = 5
    fold_seed: int = 0
    runs_dir: str | None = None          # a shared store of fold runs (e.g. the cross-fitted study's)
    # --groups (wgb.pipeline.groups): {"columns", "era_edges", "min_per_gender"}; None = no per-cell part
    groups: dict[str, Any] | None = None

    def resolved_protocol(self) -> str:
        return self.protocol or DEFAULT_PROTOCOL.get(self.profile, "test")

    @property
    def crossfit(self) -> bool:
        return self.resolved_protocol() == "crossfit"

    def all_seeds(self) -> list[int]:
        return list(self.seeds) if self.seeds is not None else [self.seed]

    def for_seed(self, seed: int) -> "PipelineConfig":
        """The configuration of one seed's run (its own sub-folder)."""
        return replace(self, seed=int(seed), seeds=None)

    def record(self) -> dict[str, Any]:
        """The configuration as saved in a run folder (``kge_engine`` only when it is not ours, so
        folders written before the option existed still match)."""
        d = asdict(self)
        if d.get("kge_engine") == "ours":
            d.pop("kge_engine")
        # the protocol as resolved; the cross-fitting fields only under crossfit, so test-protocol
        # folders written before they existed still match; where fold runs live is not identity
        d.pop("runs_dir", None)
        # the per-cell part is the identity of its own stage and of the report (wgb.pipeline.groups),
        # never of the seeds' stages: a finished run asked again with --groups reuses them
        d.pop("groups", None)
        d["protocol"] = self.resolved_protocol()
        if d["protocol"] == "test":
            for k in ("protocol", "folds", "fold_seed"):
                d.pop(k)
        return d

    def study_record(self) -> dict[str, Any]:
        """Everything but the seeds: what every seed of one output folder must share."""
        d = self.record()
        d.pop("seed")
        d.pop("seeds")
        return d

    def settings(self) -> dict[str, Any]:
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; expected one of {sorted(PROFILES)}")
        unknown = set(self.overrides) - set(PROFILES[self.profile])
        if unknown:
            raise ValueError(f"unknown profile setting(s) {sorted(unknown)}; known: {sorted(PROFILES[self.profile])}")
        for key, value in self.overrides.items():  # typed and range-checked before any work starts
            default = PROFILES[self.profile][key]
            if isinstance(default, int) and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"--set {key}={value!r}: {key} takes a whole number (e.g. {key}={default})")
            if isinstance(default, float) and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"--set {key}={value!r}: {key} takes a number (e.g. {key}={default})")
            if isinstance(default, (int, float)) and not value >= 1:
                raise ValueError(f"--set {key}={value!r}: {key} must be >= 1")
        return {**PROFILES[self.profile], **self.overrides}

    def variants(self) -> list[str]:
        return ["baseline", *["+".join(d.split("+")) for d in self.debias]]

    def validate(self) -> "PipelineConfig":
        """Everything that can be checked before any work starts."""
        from kge.bias import MEASURES
        from kge.models import MODELS
        from kge.train import EmbeddingConfig
        from relext.debias import get_debiaser
        from relext.training.train import ExtractorConfig

        check_finite(self)   # --set x=Infinity or a NaN min_score: refused before any folder is written
        s = self.settings()
        seeds = self.all_seeds()
        if not seeds or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in seeds):
            raise ValueError(f"seeds must be whole numbers >= 0, got {seeds!r}")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds repeat: {seeds!r}")
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, int) or self.min_count < 1:
            raise ValueError(f"min_count must be a whole number >= 1, got {self.min_count!r}")
        if self.threads is not None and (isinstance(self.threads, bool) or not isinstance(self.threads, int)
                                         or self.threads < 1):
            raise ValueError(f"threads must be a whole number >= 1, got {self.threads!r}")
        if not 0 <= self.min_score <= 1:
            raise ValueError(f"min_score must be in [0, 1], got {self.min_score!r}")
        if self.resolved_protocol() not in ("test", "crossfit"):
            raise ValueError(f"protocol must be 'test' or 'crossfit', got {self.protocol!r}")
        if self.crossfit:
            from relext.protocols.crossfit import FoldSpec

            FoldSpec(folds=self.folds, fold_seed=self.fold_seed)
        for d in self.debias:
            if d in ("", "none", "baseline"):
                raise ValueError("--debias names a debiasing method (e.g. cda); the baseline always runs")
            get_debiaser(d)
        for m in self.measures:
            MEASURES.canonical(m)
        MODELS.canonical(self.kge_model)
        if self.kge_engine not in ("ours", "pbg"):
            raise ValueError(f"kge_engine must be 'ours' or 'pbg', got {self.kge_engine!r}")
        if self.kge_engine == "pbg":  # its model and its interpreter, before hours of extraction
            from kge.pbg import PBGConfig, pbg_python

            PBGConfig(model=self.kge_model, dim=s["kge_dim"], epochs=s["kge_epochs"], seed=self.seed)
            try:
                pbg_python()
            except RuntimeError as e:
                raise ValueError(str(e)) from None
        # both trainers' configs as the stages will build them: a bad value fails here, not after hours
        ExtractorConfig(encoder=self.encoder, selector=self.selector, seed=self.seed, epochs=s["re_epochs"],
                    word_dim=s["word_dim"], hidden=s["hidden"], w2v_epochs=s["w2v_epochs"],
                    threads=self.threads).validate()
        EmbeddingConfig(model=self.kge_model, dim=s["kge_dim"], epochs=s["kge_epochs"], batch_size=s["kge_batch_size"],
                       seed=self.seed, num_threads=self.threads)
        check_groups(self.groups)
        if self.dataset is not None:
            from wikigenderbias.release import check_folder

            check_folder(self.dataset)
        return self


def check_groups(groups: Mapping[str, Any] | None) -> None:
    """A ``--groups`` setting (:mod:`wgb.pipeline.groups`) given through the API is checked as the CLI checks it (one-line errors)."""
    if groups is None:
        return
    from relext.evaluation.cell_gaps import parse_groups
    from wikigenderbias.groups import EraBins

    if not isinstance(groups, Mapping) or set(groups) != {"columns", "era_edges", "min_per_gender"}:
        raise ValueError(f"groups must be a mapping with columns, era_edges and min_per_gender, got {groups!r}")
    parse_groups(",".join(["gender", *groups["columns"]]))
    EraBins(tuple(groups["era_edges"]))
    m = groups["min_per_gender"]
    if isinstance(m, bool) or not isinstance(m, int) or m < 2:
        raise ValueError(f"groups min_per_gender must be a whole number >= 2, got {m!r}")


def seed_dir(out: str | os.PathLike, seed: int) -> Path:
    """The sub-folder of one seed's run."""
    return Path(out) / f"seed-{seed}"


def inputs_fingerprint(out: str | os.PathLike, seeds) -> str:
    """sha256 of the seeds' stage markers (each lists the sha256 of the files its stage wrote): what
    the stages over all seeds (the per-cell stage, the report) were computed from; a seed stage run
    again to other files changes it, and they run again."""
    import hashlib

    h = hashlib.sha256()
    for s in seeds:
        for m in sorted((Path(out) / f"seed-{s}" / "stages").glob("*.done")):
            h.update(f"{s}/{m.name}\n".encode() + m.read_bytes())
    return h.hexdigest()
