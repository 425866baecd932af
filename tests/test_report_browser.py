"""The `wgb run` report and a `wgb kge report` in a real headless browser (Chromium): they load,
show the verdicts, and screenshot at a page width of 1280 px. Skipped where Chromium is absent
(Debian: apt-get install chromium)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.propagation_data import SEEDS, synthetic_bias, synthetic_study

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine "
                                                        "(Debian: apt-get install chromium)")


def _browser(page: Path, *args: str) -> subprocess.CompletedProcess:
    # --no-sandbox: CI runs as root; --disable-dev-shm-usage: containers' /dev/shm is small;
    # --disable-background-networking: no network calls of the browser's own
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--disable-background-networking", "--hide-scrollbars", *args, page.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _check(page: Path, shot: Path, must_show: list[str]) -> None:
    dom = _browser(page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    for text in must_show:
        assert text in dom.stdout, f"{page.name}: the browser's page lacks {text!r}"
    r = _browser(page, f"--screenshot={shot}", "--window-size=1280,2000")
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (1280, 2000)
        colors = im.convert("L").getcolors(maxcolors=1 << 16)
        assert colors is None or len(colors) > 20, "a blank page"
    keep = os.environ.get("WGB_SCREENSHOTS")  # to keep the screenshots, e.g. for a review
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)


@pytest.fixture(scope="module")
def study():
    st = synthetic_study(n_male=120, n_female=120)
    return st, synthetic_bias(st)


def test_run_report_in_the_browser(study, tmp_path):
    from wgb.pipeline import PipelineConfig
    from wgb.pipeline.answer import analyse
    from wgb.pipeline.propagation import Propagation
    from wgb.pipeline.report import write_report

    st, bias = study
    p = Propagation(st, bias, measures=["data", "fisher"], n_resamples=2000)
    cfg = PipelineConfig(profile="tiny", seeds=list(SEEDS), measures=["data", "fisher"])
    out = write_report(tmp_path / "run", cfg=cfg, settings=cfg.settings(), analysis=analyse(p), link_reports={},
                       extraction={"baseline": {"spouse": {"male": 0.9, "female": 0.6}}}, timings={})
    _check(out / "report.html", tmp_path / "run_report.png",
           ["Answer", "supported", "Does extraction widen the gender difference in facts per person", "&lt;b&gt;Fish"])


def test_kge_report_in_the_browser(study, tmp_path):
    from kge.report import render

    _, bias = study
    results = bias[SEEDS[0]]["baseline"] + bias[SEEDS[0]]["gold"]
    paths = render(results, tmp_path / "kge", top=5)
    _check(paths["html"], tmp_path / "kge_report.png", ["Top 5 towards male", "Top 5 towards female", "<table>"])


ROOT = Path(__file__).resolve().parents[1]


def _with_plots(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for png in src.glob("*.png"):
        shutil.copy(png, dst / png.name)
    return dst


def test_grid_report_in_the_browser(tmp_path):
    """The committed 5-seed CNN/PCNN grid, rendered from its results.json."""
    import json

    from wgbstudies.grid_report import grid_document

    src = ROOT / "results" / "re_grid_cnn_pcnn"
    out = _with_plots(src, tmp_path / "grid")
    paths = grid_document(json.loads((src / "results.json").read_text())).write(out, "results")
    page = paths["html"].read_text()
    assert "`" not in page and "<strong>" in page and "<ul>" in page
    _check(paths["html"], tmp_path / "grid_report.png",
           ["The paper's claims: verdicts", "Equality of opportunity gap", "gaps_argmax.png"])


def test_study_report_in_the_browser(tmp_path):
    """The committed debiasing study, rendered from its results.json: the verdicts come first."""
    import json

    from wgbstudies.debias import DebiasStudyConfig
    from wgbstudies.report import study_document

    src = ROOT / "results" / "re_debias" / "study"
    cfg = DebiasStudyConfig(**json.loads((src / "study.json").read_text()))
    summary = json.loads((src / "results.json").read_text())
    out = _with_plots(src, tmp_path / "study")
    paths = study_document(cfg, summary, json.loads((src / "variants.json").read_text())).write(out, "results")
    page = paths["html"].read_text()
    assert "`" not in page and page.index("claims: verdicts") < page.index("Per-variant tables")
    _check(paths["html"], tmp_path / "study_report.png",
           ["The paper's claims: verdicts", "CDA raises micro F1", "supported", "Direct bias"])
