"""The run report's chart style, shared by its figures (:mod:`wgb.pipeline.report`,
:mod:`wgb.pipeline.groups_report`): size, resolution, markers, a colour per relation, and matplotlib
on the Agg backend."""
from __future__ import annotations

#: Width of the charts in inches at ``DPI``: 1000 px, the page's text width.
FIG_WIDTH, DPI = 10.0, 100
MARKERS = ["o", "s", "^", "D", "v", "P"]
REL_COLORS = {"spouse": "#c0504d", "hypernym": "#4f8a10", "birthDate": "#8064a2", "birthPlace": "#2b8cbe"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
