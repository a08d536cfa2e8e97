"""The observation store every domain shares (lookout.core.observations): records on disk with their files,
the latest per resource, and the one staleness check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lookout.core.errors import NotFound
from lookout.core.observations import ObservationStore, Seen, staleness


def _store(root: Path) -> ObservationStore:
    return ObservationStore(root, "page", lambda key: key.replace(":", "_"), "ts")


def test_a_saved_observation_is_loaded_back_with_its_files_in_the_resources_folder(tmp_path: Path) -> None:
    store = _store(tmp_path)
    obs_id = store.new_id()
    record = {"obs_id": obs_id, "ts": 10.0, "scale": {"factor": 2.0}}
    store.save("a:1", record, {"png": b"PNG"})
    folder = tmp_path / "a_1" / "observations"
    assert json.loads((folder / f"{obs_id}.json").read_text()) == record
    assert (folder / f"{obs_id}.png").read_bytes() == b"PNG"
    assert store.file("a:1", obs_id, "png") == folder / f"{obs_id}.png"
    assert store.load("a:1", obs_id) == record


def test_unknown_and_unsafe_ids_are_not_found_and_reading_creates_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(NotFound, match="no observation 'o_missing' of page 'x'"):
        store.load("x", "o_missing")
    with pytest.raises(NotFound):
        store.load("x", "../../etc/passwd")
    assert store.records("x") == [] and store.latest("x") is None
    assert list(tmp_path.iterdir()) == []


def test_the_latest_is_the_newest_also_for_a_new_store_and_can_be_filtered(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save("r", {"obs_id": "o_2", "ts": 2.0, "ui": True})
    store.save("r", {"obs_id": "o_3", "ts": 3.0, "ui": False})
    store.save("r", {"obs_id": "o_1", "ts": 1.0, "ui": False})  # older: the latest stays o_3
    assert store.latest("r")["obs_id"] == "o_3"
    assert store.latest("r", lambda record: record["ui"])["obs_id"] == "o_2"
    again = _store(tmp_path)  # an earlier run's observations
    assert [r["obs_id"] for r in again.records("r")] == ["o_1", "o_2", "o_3"]
    assert again.latest("r")["obs_id"] == "o_3"


def test_staleness_says_what_changed_or_none_while_the_observation_holds() -> None:
    seen = Seen(100.0, {"the screen": "1080x2400 at rotation 0", "the focused window": "com.a/.Main"})
    same = {"the screen": "1080x2400 at rotation 0", "the focused window": "com.a/.Main"}
    assert staleness(seen, 104.0, same, max_age_s=5, purpose="to join it") is None
    assert staleness(seen, 106.0, same, max_age_s=5, purpose="to join it") == "it is 6 s old (at most 5 s to join it)"
    turned = {**same, "the screen": "2400x1080 at rotation 1"}
    assert staleness(seen, 101.0, turned) == "the screen was 1080x2400 at rotation 0 and is now 2400x1080 at rotation 1"
    assert staleness(seen, 101.0, {"the screen": "1080x2400 at rotation 0"}) is None  # a fact not asked about
    assert staleness(seen, 101.0, same, since={"the page navigated": 100.5}) == "the page navigated since"
    assert staleness(seen, 101.0, same, since={"the page navigated": 99.0}) is None


def test_a_forgotten_resource_keeps_its_files_and_its_latest_is_read_from_disk(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save("r", {"obs_id": "o_1", "ts": 1.0})
    store.forget("r")
    assert store.latest("r") == {"obs_id": "o_1", "ts": 1.0}
    (tmp_path / "r" / "observations" / "o_1.json").unlink()
    assert store.latest("r") is None  # not held in memory any more
