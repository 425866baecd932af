"""The dataset card's Hugging Face metadata: nothing `huggingface_hub.DatasetCard` knows is missing."""
import pytest

from wikigenderbias.card import card_metadata, size_category
from wikigenderbias.release import data_dir

#: DatasetCardData's fields (huggingface_hub) that a card fills in; paperswithcode_id and
#: train_eval_index do not apply
FIELDS = ("language", "license", "annotations_creators", "language_creators", "multilinguality",
          "size_categories", "source_datasets", "task_categories", "task_ids", "pretty_name")


def test_embedded_card_has_every_metadata_field():
    hub = pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed")
    card = hub.DatasetCard.load(data_dir() / "README.md")
    data = card.data.to_dict()
    missing = [f for f in FIELDS if not data.get(f)]
    assert not missing, f"missing in the card's YAML: {missing}"
    assert data["size_categories"] == ["10K<n<100K"] and data["license"] == "cc-by-sa-3.0"
    assert data["task_ids"] == ["multi-class-classification"] and data["language"] == ["en"]
    assert {c["config_name"] for c in data["configs"]} == {"sentences", "entities"}


def test_size_categories_and_annotations():
    assert [size_category(n) for n in (0, 999, 1000, 45529, 2_680_000, 10 ** 13)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "1M<n<10M", "n>1T"]
    report = {"counts": {"train": {"sentences": 600}, "male_test": {"sentences": 500}}}
    assert card_metadata(None, report)["size_categories"] == ["1K<n<10K"]
    assert "size_categories" not in card_metadata(None, {})
    assert card_metadata(None, {"annotation": {"items": 3}})["annotations_creators"] == [
        "machine-generated", "crowdsourced"]
