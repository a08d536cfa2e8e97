"""The daemon's reading of a holder's journal (lookout.terminal.journal.follower): batches end at resizes."""
from __future__ import annotations

import json
from pathlib import Path

from lookout.terminal.journal.follower import JournalFollower


def _journal(directory: Path, data: bytes, records: list[list[object]]) -> None:
    (directory / "output.raw").write_bytes(data)
    (directory / "output.idx").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_batch_ends_at_a_resize_and_the_next_one_starts_with_its_size(tmp_path: Path) -> None:
    _journal(tmp_path, b"abcdefghij", [[0, "r", 0, "80x24"], [0.1, "r", 4, "100x30"], [0.2, "r", 10, "40x10"]])
    follower = JournalFollower(tmp_path, 0, 0.0)
    batches = []
    while follower.behind(10):
        batches.append(follower.read(10, 1 << 20))
    assert [(b.data, b.size) for b in batches] == [(b"abcd", (80, 24)), (b"efghij", (100, 30)), (b"", (40, 10))]
    assert not follower.behind(10)


def test_two_resizes_at_one_offset_give_the_last_and_earlier_ones_are_not_handed_on(tmp_path: Path) -> None:
    records = [[0, "r", 2, "90x20"], [0.1, "r", 6, "50x12"], [0.2, "r", 6, "60x15"], [0.3, "r", 8, "0x0"]]
    _journal(tmp_path, b"0123456789", records)
    follower = JournalFollower(tmp_path, 4, 0.0)  # taken up at offset 4: the resize at 2 is the past screen's
    first, second = follower.read(10, 1 << 20), follower.read(10, 1 << 20)
    assert (first.data, first.size) == (b"45", None)
    assert (second.data, second.size) == (b"6789", (60, 15))  # a size no terminal has is never handed on
