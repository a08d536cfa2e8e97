"""What a later daemon takes a terminal up from: screen.snapshot.json read back (lookout.terminal.journal.persistence)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lookout.terminal.journal.persistence import SavedScreen, load_snapshot


def _saved(tmp_path: Path, content: object) -> SavedScreen:
    (tmp_path / "screen.snapshot.json").write_text(json.dumps(content))
    return load_snapshot(tmp_path)


def test_what_was_written_is_taken_up(tmp_path: Path) -> None:
    blocks = {"running": None, "command": "ls", "prompt_end": 12, "forged": 2}
    saved = _saved(tmp_path, {"raw_offset": 300, "title": "t", "bracketed_paste": True, "cwd": "/tmp", "blocks": blocks})
    assert saved == SavedScreen(raw_offset=300, title="t", bracketed_paste=True, cwd="/tmp", blocks=blocks)
    assert saved.forged == 2


def test_no_file_or_no_json_is_a_screen_from_the_start(tmp_path: Path) -> None:
    assert load_snapshot(tmp_path) == SavedScreen()
    (tmp_path / "screen.snapshot.json").write_text("{not json")
    assert load_snapshot(tmp_path) == SavedScreen()
    assert _saved(tmp_path, [1, 2]) == SavedScreen()


@pytest.mark.parametrize("offset", [-1, "12", 1.5, None, True])
def test_an_offset_that_is_not_one_is_told_apart_from_none_written(tmp_path: Path, offset: object) -> None:
    assert _saved(tmp_path, {"raw_offset": offset}).raw_offset is None
    assert _saved(tmp_path, {}).raw_offset == 0


def test_fields_of_another_kind_are_their_defaults(tmp_path: Path) -> None:
    saved = _saved(tmp_path, {"title": 5, "bracketed_paste": "yes", "cwd": ["/"], "blocks": {"forged": -3}})
    assert (saved.title, saved.bracketed_paste, saved.cwd, saved.forged) == ("", False, None, 0)


def test_a_snapshot_from_before_the_tracker_state_keeps_its_forged_count(tmp_path: Path) -> None:
    assert _saved(tmp_path, {"raw_offset": 0, "forged_marks": 4}).forged == 4


def _checkpoint(**fields: object) -> dict[str, object]:
    return {"offset": 280, "cols": 80, "rows": 24, "dump": "x", "kept": {}, "title": "t", **fields}


def test_the_checkpoint_taken_with_the_snapshot_is_taken_up(tmp_path: Path) -> None:
    checkpoint = _checkpoint()
    assert _saved(tmp_path, {"raw_offset": 300, "checkpoint": checkpoint}).checkpoint == checkpoint
    assert _saved(tmp_path, {"raw_offset": 280, "checkpoint": checkpoint}).checkpoint == checkpoint


@pytest.mark.parametrize(
    "checkpoint",
    [
        _checkpoint(offset=301),  # after what the snapshot reflects: it would skip output
        _checkpoint(offset=-1),
        _checkpoint(offset="280"),
        _checkpoint(dump=None),
        _checkpoint(cols=0),
        _checkpoint(rows="24"),
        _checkpoint(kept=[1]),
        "280",
    ],
)
def test_a_checkpoint_that_cannot_be_replayed_from_is_none(tmp_path: Path, checkpoint: object) -> None:
    assert _saved(tmp_path, {"raw_offset": 300, "checkpoint": checkpoint}).checkpoint is None
    assert _saved(tmp_path, {"raw_offset": "300", "checkpoint": _checkpoint()}).checkpoint is None
