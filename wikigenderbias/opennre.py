"""Export to OpenNRE's JSON-lines format, so other extractors can run on the benchmark.

One line per sentence: ``{"token": [...], "h": {"name", "id", "pos": [s, e]}, "t": {...},
"relation": name}`` with token positions ``[start, end)``, plus ``rel2id.json``. OpenNRE's bag
loader groups lines into bags by (h.id, t.id, relation) for training and by (h.id, t.id) for
evaluation. Rows whose head or tail mention was not located have no positions and are skipped
(counted in ``manifest.json``).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from wikigenderbias.schema import GENDERS, RELATIONS, SPLITS


def opennre_line(row: dict[str, Any]) -> dict[str, Any] | None:
    """One OpenNRE example from a ``sentences`` row (ClassLabels as ints), or None if unlocated."""
    if row["head_span"][0] < 0 or row["tail_span"][0] < 0:
        return None
    return {
        "token": list(row["tokens"]),
        "h": {"name": row["head"], "id": row["entity_id"], "pos": list(row["head_span"])},
        "t": {"name": row["tail"], "id": f"{row['entity_id']}|{row['tail']}", "pos": list(row["tail_span"])},
        "relation": RELATIONS[row["relation"]],
        # extra fields (ignored by OpenNRE) that keep the fairness analysis possible
        "gender": GENDERS[row["gender"]],
        "id": row["id"],
    }


def export_opennre(dsdict, out_dir: str | os.PathLike, *, prefix: str = "wikigenderbias",
                   overwrite: bool = False) -> dict[str, Any]:
    """Write ``<prefix>_<split>.txt`` for every split and ``rel2id.json`` into ``out_dir``."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()) and not overwrite:
        raise FileExistsError(f"{out_dir} exists and is not empty; pass --overwrite to replace it")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    manifest: dict[str, Any] = {"format": "opennre", "rel2id": "rel2id.json", "splits": {}}
    try:
        (tmp / "rel2id.json").write_text(json.dumps({r: i for i, r in enumerate(RELATIONS)}, indent=1) + "\n")
        for split in SPLITS:
            ds = dsdict[split]
            name = f"{prefix}_{split}.txt"
            written = skipped = 0
            with open(tmp / name, "w", encoding="utf-8") as fh:
                for row in ds:
                    line = opennre_line(row)
                    if line is None:
                        skipped += 1
                        continue
                    fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                    written += 1
            manifest["splits"][split] = {"file": name, "sentences": written, "skipped_unlocated": skipped}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest
