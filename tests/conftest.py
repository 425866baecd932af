"""Test-wide settings: offline, temp caches, no stray threads."""
import os
import tempfile

_TMP_HOME = tempfile.mkdtemp(prefix="wgb-test-hf-")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ["HF_HOME"] = _TMP_HOME
os.environ["HF_DATASETS_CACHE"] = os.path.join(_TMP_HOME, "datasets")
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
