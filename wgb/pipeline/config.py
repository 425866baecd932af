"""What a `wgb run` does: the profiles (sizes of every stage) and :class:`PipelineConfig`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wgbcore.config import parse_overrides

__all__ = ["PROFILES", "DEFAULT_MEASURES", "TEST_SPLITS", "GENDER_RELATION", "TARGET_RELATION", "PipelineConfig",
           "parse_overrides"]

PROFILES: dict[str, dict[str, Any]] = {
    # seconds, for the test suite: tiny models on whatever (small) dataset is given
    "tiny": {"re_epochs": 1, "word_dim": 16, "hidden": 16, "w2v_epochs": 1, "kge_dim": 16, "kge_epochs": 5,
             "n_resamples": 50, "kge_batch_size": 256},
    # under 15 minutes on 2 cores
    "quick": {"re_epochs": 3, "word_dim": 50, "hidden": 230, "w2v_epochs": 5, "kge_dim": 50, "kge_epochs": 200,
              "n_resamples": 1000, "kge_batch_size": 1024},
    # the documented full run
    "full": {"re_epochs": 15, "word_dim": 50, "hidden": 230, "w2v_epochs": 5, "kge_dim": 100, "kge_epochs": 1000,
             "n_resamples": 1000, "kge_batch_size": 1024},
}
DEFAULT_MEASURES = ("data", "fisher", "bourli_projection")
TEST_SPLITS = ("male_test", "female_test")
GENDER_RELATION = "gender"
TARGET_RELATION = "hypernym"


@dataclass
class PipelineConfig:
    profile: str = "quick"
    seed: int = 0
    dataset: str | None = None            # benchmark folder; None = the embedded release
    encoder: str = "pcnn"
    selector: str = "attention"
    debias: list[str] = field(default_factory=lambda: ["cda"])
    kge_model: str = "transe"
    measures: list[str] = field(default_factory=lambda: list(DEFAULT_MEASURES))
    link_fb13: bool = False
    min_score: float = 0.0
    threads: int | None = None
    overrides: dict[str, Any] = field(default_factory=dict)   # profile values to change

    def settings(self) -> dict[str, Any]:
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; expected one of {sorted(PROFILES)}")
        unknown = set(self.overrides) - set(PROFILES[self.profile])
        if unknown:
            raise ValueError(f"unknown profile setting(s) {sorted(unknown)}; known: {sorted(PROFILES[self.profile])}")
        return {**PROFILES[self.profile], **self.overrides}

    def variants(self) -> list[str]:
        return ["baseline", *["+".join(d.split("+")) for d in self.debias]]

    def validate(self) -> "PipelineConfig":
        """Everything that can be checked before any work starts."""
        from kge.bias import MEASURES
        from kge.models import MODELS
        from relext.debias import get_debiaser
        from relext.train import TrainConfig

        self.settings()
        for d in self.debias:
            if d in ("", "none", "baseline"):
                raise ValueError("--debias names a debiasing method (e.g. cda); the baseline always runs")
            get_debiaser(d)
        for m in self.measures:
            MEASURES.canonical(m)
        MODELS.canonical(self.kge_model)
        TrainConfig(encoder=self.encoder, selector=self.selector).validate()
        if self.dataset is not None:
            from wikigenderbias.release import check_folder

            check_folder(self.dataset)
        return self
