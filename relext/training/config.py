"""The relation extractor's run config: everything that defines a training run.

``identity()`` is what a run directory, a checkpoint and a model are checked against (runtime
fields left out); a run record is read with ``ExtractorConfig.from_json(path, record=True)``.
Transforms whose behaviour changed carry a version (``relext.debias.transform_versions``) in the
identity, so a finished run of an older version is refused, never silently reused. Likewise the
CNN/PCNN convolution's implementation (``conv_impl``: ``"dense"``, the path of every run before the
gather path, or ``"gather"``, the same function in real arithmetic computed from per-word
projections, see :mod:`relext.model.encoders.conv_gather`; a new CNN or PCNN run's default since
their equivalence studies, :func:`default_conv_impl`): a run record without the field was trained by ``"dense"``, and the identity names the field only where it differs from that (and
only for an encoder with a convolution), so a study never mixes the two paths silently. The same
holds for the RNN/BiRNN recurrence on CPU (``rnn_impl``: ``"fused"``, every committed run, or
``"gather"``, :mod:`relext.model.encoders.rnn_gather`): a record without it was trained by ``"fused"``,
and the identity names it only where it differs (and only for a recurrent encoder).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import torch

from relext.model.bags import UNLOCATED_POLICIES
from relext.model.embeddings import Word2VecParams
from relext.model.encoders import encoder_class
from relext.model.encoders.cnn import CONV_IMPLS
from relext.model.encoders.rnn import RNN_IMPLS
from relext.model.selectors import selector_class
from wgbcore.config import check_finite

OPTIMIZERS = ("sgd", "adam")
SELECT_METRICS = ("micro_f1", "pr_auc")
#: Fields that do not change a run's identity (a run may resume with other values): where and how
#: fast it runs. Like the thread count, the bucket size only changes float summation order.
RUNTIME_FIELDS = frozenset({"threads", "cache_dir", "eval_batch_size", "device", "bucket_size"})
DEVICES = ("cpu", "cuda", "auto")
#: The convolution a run record without ``conv_impl`` was trained with (every run before the field).
LEGACY_CONV_IMPL = "dense"
#: The CPU recurrence a run record without ``rnn_impl`` was trained with (every run before the field).
LEGACY_RNN_IMPL = "fused"


def default_conv_impl(encoder: str) -> str:
    """The convolution a new run of ``encoder`` gets when its config names none: the encoder class's
    ``default_conv_impl`` (CNN and PCNN: ``"gather"``, equivalent to ``"dense"`` within 0.005 F1 on
    every quantity of their confirmatory studies, ``benchmarks/results/re_equivalence_confirm.md`` and
    ``re_equivalence_cnn.md``), :data:`LEGACY_CONV_IMPL` for an encoder without a convolution or an unknown one."""
    try:
        return getattr(encoder_class(encoder), "default_conv_impl", LEGACY_CONV_IMPL)
    except ValueError:
        return LEGACY_CONV_IMPL


@dataclass
class ExtractorConfig:
    """Everything that defines a training run (OpenNRE's defaults for the model)."""

    encoder: str = "pcnn"
    selector: str = "attention"
    seed: int = 0
    epochs: int = 10
    batch_size: int = 160           # bags per batch
    optimizer: str = "sgd"
    lr: float = 0.1
    weight_decay: float = 1e-5
    word_dim: int = 50              # OpenNRE 50; the WikiGenderBias authors 100
    pos_dim: int = 5
    hidden: int = 230
    kernel: int = 3
    max_length: int = 120
    dropout: float = 0.5
    patience: int = 3               # epochs without improvement before stopping; 0 = never stop early
    select_metric: str = "micro_f1"
    rnn_cell: str = "gru"
    bucket_size: int = 64           # CNN/PCNN: sentences per length bucket (speed only; dense path)
    # CNN/PCNN convolution: "dense" (im2col matrix product over length buckets; every run before
    # the gather path) or "gather" (per-word projections gathered at the real tokens; equal in real
    # arithmetic, not bit for bit). None: the encoder's default ("gather" for CNN and PCNN,
    # since their confirmatory equivalence studies). Part of the run's identity; a record without it
    # means "dense".
    conv_impl: str | None = None
    # RNN/BiRNN recurrence on CPU: "fused" (every committed run) or "gather" (gathered input
    # projections, a leaner step; equal in real arithmetic, not bit for bit). Part of the run's
    # identity; a record without it means "fused". On CUDA both run the module's cuDNN forward.
    rnn_impl: str = "fused"
    unlocated: str = "start"        # see relext.model.bags
    dataset: str | None = None      # benchmark folder; None = the embedded release
    w2v_window: int = 5
    w2v_min_count: int = 2
    w2v_sg: int = 0
    w2v_negative: int = 5
    w2v_epochs: int = 5
    lowercase: bool = True
    dataset_transform: list[str] = field(default_factory=list)
    vectors_transform: list[str] = field(default_factory=list)
    transformer_path: str | None = None
    max_wordpieces: int = 128
    threads: int | None = None      # torch threads; None = torch's default
    eval_batch_size: int = 512      # bags per evaluation batch
    cache_dir: str | None = None    # Word2Vec cache; None = $WGB_CACHE/word2vec or ~/.cache/wgb/word2vec
    device: str = "cpu"             # cpu | cuda | auto (cuda when available); runtime only, runs resume anywhere
    # person-level cross-fitting (relext.protocols.crossfit): None = the release's own test split
    folds: int | None = None        # K person-disjoint folds over every person of the dataset
    fold: int | None = None         # the held-out fold this run predicts (0..K-1)
    fold_seed: int = 0              # deals the persons into folds (stratified by gender and split)
    fold_val_fraction: float = 0.1  # the other folds' persons held back for model selection
    # versions of the named transforms whose behaviour changed since they were first released
    # (relext.debias.transform_versions); None = this wgb's. A run record written before versions
    # were recorded reads as version 1 of each (``from_json(..., record=True)``).
    transform_versions: dict[str, int] | None = None

    def __post_init__(self) -> None:
        if self.conv_impl is None:      # the encoder's default path (an unknown encoder fails in validate)
            self.conv_impl = default_conv_impl(self.encoder)

    def validate(self) -> "ExtractorConfig":
        encoder_class(self.encoder)
        selector_class(self.selector)
        checks = [
            (self.optimizer in OPTIMIZERS, f"optimizer must be one of {list(OPTIMIZERS)}, got {self.optimizer!r}"),
            (self.select_metric in SELECT_METRICS, f"select_metric must be one of {list(SELECT_METRICS)}, got {self.select_metric!r}"),
            (self.unlocated in UNLOCATED_POLICIES, f"unlocated must be one of {list(UNLOCATED_POLICIES)}, got {self.unlocated!r}"),
            (self.rnn_cell in ("gru", "lstm"), f"rnn_cell must be 'gru' or 'lstm', got {self.rnn_cell!r}"),
            (self.epochs >= 1, f"epochs must be >= 1, got {self.epochs}"),
            (self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}"),
            (self.max_length >= 2, f"max_length must be >= 2, got {self.max_length}"),
            (self.lr > 0, f"lr must be > 0, got {self.lr}"),
            (0 <= self.dropout < 1, f"dropout must be in [0, 1), got {self.dropout}"),
            (self.patience >= 0, f"patience must be >= 0, got {self.patience}"),
            (self.kernel >= 1 and self.kernel % 2 == 1, f"kernel must be a positive odd number, got {self.kernel}"),
            (self.conv_impl in CONV_IMPLS, f"conv_impl must be one of {list(CONV_IMPLS)}, got {self.conv_impl!r}"),
            (self.rnn_impl in RNN_IMPLS, f"rnn_impl must be one of {list(RNN_IMPLS)}, got {self.rnn_impl!r}"),
            (self.device in DEVICES or self.device.startswith("cuda:"),
             f"device must be one of {list(DEVICES)} or 'cuda:N', got {self.device!r}"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)
        check_finite(self)   # lr=inf would train into NaN after config.json was written
        from relext.protocols.crossfit import check_config

        check_config(self)
        if isinstance(self.dataset_transform, str) or isinstance(self.vectors_transform, str):
            raise ValueError("dataset_transform / vectors_transform are lists of debiaser names")
        return self

    def torch_device(self) -> torch.device:
        """The torch device of this run; asking for cuda without a GPU is a clear error."""
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError(f"device {self.device!r} asked for, but torch sees no CUDA GPU "
                             f"(torch {torch.__version__}); use device='cpu' or 'auto'")
        return torch.device(self.device)

    def word2vec_params(self) -> Word2VecParams:
        return Word2VecParams(dim=self.word_dim, window=self.w2v_window, min_count=self.w2v_min_count,
                              sg=self.w2v_sg, negative=self.w2v_negative, epochs=self.w2v_epochs,
                              seed=self.seed, lowercase=self.lowercase)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["dataset_transform"] = list(self.dataset_transform)
        d["vectors_transform"] = list(self.vectors_transform)
        return d

    @classmethod
    def from_json(cls, obj: dict[str, Any] | str | os.PathLike, *, source: str | None = None,
                  record: bool = False) -> "ExtractorConfig":
        """A config from a dict or a JSON file. ``record=True``: the config a trainer wrote (a run's
        ``config.json``, a checkpoint's or a model's); one without ``transform_versions`` was
        written before versions were recorded, by version 1 of every transform, and one without
        ``conv_impl`` by the dense convolution (:data:`LEGACY_CONV_IMPL`) and one without
        ``rnn_impl`` by the fused recurrence (:data:`LEGACY_RNN_IMPL`), whatever today's defaults."""
        if not isinstance(obj, dict):
            path = Path(obj)
            source = source or str(path)
            try:
                obj = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
        obj = dict(obj.get("config", obj)) if "config" in obj and isinstance(obj["config"], dict) else dict(obj)
        obj.pop("package_version", None)
        if record and "transform_versions" not in obj:
            obj["transform_versions"] = {}
        if record and "conv_impl" not in obj:
            obj["conv_impl"] = LEGACY_CONV_IMPL
        if record and "rnn_impl" not in obj:
            obj["rnn_impl"] = LEGACY_RNN_IMPL
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise ValueError(f"{source or 'config'}: unknown field(s) {unknown}; known: {sorted(known)}")
        return cls(**obj)

    def identity(self) -> dict[str, Any]:
        """The fields that define the run (runtime fields left out; the cross-fitting fields only
        for a fold run, so test-protocol runs keep the identity they had before folds existed)."""
        from relext.protocols.crossfit import CONFIG_FIELDS

        d = {k: v for k, v in self.to_json().items() if k not in RUNTIME_FIELDS}
        if self.folds is None:
            for k in CONFIG_FIELDS:
                d.pop(k, None)
        if self.conv_impl == LEGACY_CONV_IMPL or not self.has_convolution():
            d.pop("conv_impl", None)    # the identity runs had before the field existed
        if self.rnn_impl == LEGACY_RNN_IMPL or not self.has_recurrence():
            d.pop("rnn_impl", None)
        versions = self.effective_transform_versions()
        if versions:
            d["transform_versions"] = versions
        else:  # only transforms at version 1: the identity runs had before versions existed
            d.pop("transform_versions", None)
        return d

    def has_convolution(self) -> bool:
        """Does this config's encoder have the convolution ``conv_impl`` picks (CNN, PCNN)?"""
        try:
            return bool(getattr(encoder_class(self.encoder), "conv_impls", ()))
        except ValueError:
            return False

    def has_recurrence(self) -> bool:
        """Does this config's encoder have the recurrence ``rnn_impl`` picks (RNN, BiRNN)?"""
        try:
            return bool(getattr(encoder_class(self.encoder), "rnn_impls", ()))
        except ValueError:
            return False

    def effective_transform_versions(self) -> dict[str, int]:
        """The versions this config's transforms stand for: recorded ones, else this wgb's
        (only those above 1)."""
        if self.transform_versions is not None:
            return {k: int(v) for k, v in sorted(self.transform_versions.items()) if int(v) > 1}
        from relext.debias import transform_versions

        return transform_versions([*self.dataset_transform, *self.vectors_transform])

    def current(self) -> "ExtractorConfig":
        """This config with its transform versions made explicit, as a trainer runs and records
        it; an error when it asks for a version this wgb no longer has."""
        from relext.debias import transform_versions

        have = transform_versions([*self.dataset_transform, *self.vectors_transform])
        want = self.effective_transform_versions()
        if want != have:
            raise ValueError(f"transform_versions {want} asked for, but this wgb implements {have or 'version 1'}; "
                             "a run of an older transform cannot be trained or resumed (use a new run directory)")
        return replace(self, transform_versions=have)

    def differences(self, other: "ExtractorConfig") -> list[str]:
        a, b = self.identity(), other.identity()
        return [k for k in (*a, *(k for k in b if k not in a)) if a.get(k) != b.get(k)]
