"""Prediction files of a trained run: one row per entity pair, OpenNRE's test-time scores."""
import json

import pytest
import torch

from relext.training.predict import load_trained, predict_split, write_predictions
from support.relext_data import tiny_dataset
from relext.training.train import TrainConfig, train


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pred")
    ds = tiny_dataset(n_train=16, n_eval=4)
    cfg = TrainConfig(encoder="cnn", selector="attention", epochs=1, batch_size=8, word_dim=8, hidden=8,
                      max_length=30, w2v_epochs=1, threads=1, cache_dir=str(tmp / "w2v"))
    return train(cfg, tmp / "run", dataset=ds, progress=False), ds


def test_write_predictions_rows(trained):
    run, ds = trained
    paths = write_predictions(run, dataset=ds)
    assert set(paths) == {"validation", "male_test", "female_test"}
    for split, path in paths.items():
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        pairs = {(r["entity_id"], r["tail"]) for r in ds[split]}
        assert len(rows) == len(pairs) == len({r["bag_id"] for r in rows})
        for row in rows:
            assert set(row) == {"bag_id", "split", "entity_id", "head", "tail", "gender", "labels", "scores",
                                "sentence_ids"}
            assert row["split"] == split and len(row["scores"]) == 5
            assert all(0 <= s <= 1 for s in row["scores"]) and row["labels"]
            gold = {r["relation"] for r in ds[split] if r["entity_id"] == row["entity_id"] and r["tail"] == row["tail"]}
            assert set(row["labels"]) == (gold - {0} or {0})
        if split == "male_test":
            assert {r["gender"] for r in rows} == {"male"}
    assert predict_split(run, "female_test", dataset=ds) == [
        json.loads(line) for line in paths["female_test"].read_text().splitlines()]


def test_loaded_model_matches_saved_and_errors(trained, tmp_path):
    run, _ = trained
    cfg, vocab, model = load_trained(run)
    saved = torch.load(run / "model.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(model.state_dict()[k], v) for k, v in saved.items())
    assert not model.training and cfg.encoder == "cnn"
    with pytest.raises(FileNotFoundError, match="missing; is .* a trained run directory"):
        load_trained(tmp_path)


# --------------------------------------------------------------------------------------------
# Nothing executable in data files: a crafted model.pt / checkpoint.pt never runs code
# --------------------------------------------------------------------------------------------
class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("which", ["model", "checkpoint"])
def test_crafted_files_are_refused_without_running_code(tmp_path, which):
    import torch

    from relext.training.train import load_torch_file

    marker = tmp_path / "pwned"
    bad = tmp_path / f"{which}.pt"
    torch.save({"config": {}, "state_dict": _Exploit(marker)}, bad)
    with pytest.raises(ValueError, match=f"{bad}: not a readable relext {which}"):
        load_torch_file(bad, what=which)
    assert not marker.exists()
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a torch file at all")
    with pytest.raises(ValueError, match="garbage.pt: not a readable relext"):
        load_torch_file(garbage, what=which)
