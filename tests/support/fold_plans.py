"""Tiny benchmarks whose cross-fitting plan cannot work (too few women, men or persons for the
folds), in memory and as benchmark folders, for the checks of the whole fold plan."""
from __future__ import annotations

from datasets import Dataset, DatasetDict

from support.relext_data import split_rows
from wikigenderbias.schema import sentence_features

FEMALE, MALE = 0, 1


def persons_dataset(**splits: tuple[int, int]) -> DatasetDict:
    """``split=(women, men)`` for each split named: a DatasetDict with that many persons of each
    gender (synthetic sentences; every split the trainer needs is present, maybe empty of one gender)."""
    feats = sentence_features()
    out = {}
    for i, (split, (w, m)) in enumerate(splits.items()):
        women = split_rows(f"{split}f", w, 10 + i, (FEMALE,)) if w else None
        men = split_rows(f"{split}m", m, 20 + i, (MALE,)) if m else None
        cols = {k: (women[k] if women else []) + (men[k] if men else []) for k in feats}
        out[split] = Dataset.from_dict(cols, features=feats)
    return DatasetDict(out)


def benchmark_folder(folder, *, women: dict[str, int], men: dict[str, int]):
    """A benchmark folder (``wikigenderbias.export.write_benchmark``) of real release articles: the
    first ``women[split]`` female and ``men[split]`` male articles of each split."""
    import wikigenderbias
    from wikigenderbias.export import write_benchmark
    from wikigenderbias.schema import GENDERS

    ents = wikigenderbias.load("entities")
    out = {}
    for split in ("train", "validation", "male_test", "female_test"):
        want = {"female": women.get(split, 0), "male": men.get(split, 0)}
        rows = []
        for r in ents[split]:
            g = GENDERS[r["gender"]]
            if want[g] > 0:
                want[g] -= 1
                rows.append({**r, "gender": g})
            if not any(want.values()):
                break
        out[split] = rows
    return write_benchmark(folder, out, description="fold-plan check", progress=False)
