"""The daemon's reading of a holder's journal (lookout.terminal.journal.follower): batches end at resizes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout.terminal.journal import follower as follower_module
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


def test_among_many_output_records_every_mark_resize_and_exit_is_taken_also_across_reads_and_a_torn_line(
    tmp_path: Path,
) -> None:
    # 120,000 `o` records (more than one 1 MB read of the index) with a mark, resizes and the exit among them;
    # the last line is torn (the holder is writing it) and is taken once it is whole
    records: list[list[object]] = [[0, "r", 0, "80x24"]]
    for i in range(120_000):
        records.append([i / 1000, "o", i, 1])
        if i == 50_000:
            records.append([50.5, "n", 50_001, 0])
        if i == 90_000:
            records += [[90.5, "r", 90_001, "100x30"], [90.6, "r", 90_001, "120x40"]]
    records.append([200, "x", 120_000, 3])
    text = "".join(json.dumps(r) + "\n" for r in records)
    (tmp_path / "output.raw").write_bytes(b"." * 120_000)
    (tmp_path / "output.idx").write_text(text[:-3])
    follower = JournalFollower(tmp_path, 0, 1000.0)
    follower.refresh()
    assert follower.exit_code is None  # its line is not whole yet
    with (tmp_path / "output.idx").open("a") as f:
        f.write(text[-3:])
    batches = []
    while follower.behind(120_000):
        batches.append(follower.read(120_000, 1 << 20))
    assert follower.exit_code == 3
    assert [(len(b.data), b.size) for b in batches] == [(90_001, (80, 24)), (29_999, (120, 40))]
    assert batches[0].marks == {50_001: 1050.5} and batches[1].marks == {}


def test_new_records_shorter_than_a_read_cost_one_read_of_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _journal(tmp_path, b"0123456789", [[0, "o", 0, 10]])
    follower = JournalFollower(tmp_path, 0, 0.0)
    reads: list[int] = []
    pread = os.pread
    monkeypatch.setattr(follower_module.os, "pread", lambda fd, size, at: reads.append(fd) or pread(fd, size, at))
    follower.refresh()
    with (tmp_path / "output.idx").open("a") as index:
        index.write(json.dumps([0.1, "x", 10, 0]) + "\n")
    follower.refresh()
    assert reads == [follower._idx, follower._idx] and follower.exit_code == 0
