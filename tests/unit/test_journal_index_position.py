"""Taking a journal up from an offset reads its index's tail (lookout.terminal.journal.reader.index_position):
every record at or after the offset is read, and the history before it is not."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout.terminal.journal.follower import JournalFollower
from lookout.terminal.journal.reader import index_position, read_kind

CHUNK = 100
RECORDS = 40_000
"""Output records of CHUNK bytes: a journal of 4 MB, an index of about 1 MB."""
PROBE_RECORDS = 2 * (64 << 10) // 20
"""How many records (of about 25 bytes) the search may stop short by, at most."""


def _history(directory: Path, extra: dict[int, list[list[object]]] | None = None, big: dict[int, int] | None = None
             ) -> list[list[object]]:  # fmt: skip
    """An index as a holder writes it: output records in order (of CHUNK bytes, or `big[i]`), with `extra`
    records written before the output record of each index (an `n` record points into that output, a
    resize is at its start)."""
    records: list[list[object]] = []
    offset = 0
    for i in range(RECORDS):
        records += (extra or {}).get(i, [])
        size = (big or {}).get(i, CHUNK)
        records.append([i * 0.02, "o", offset, size])
        offset += size
    (directory / "output.idx").write_text("".join(json.dumps(r) + "\n" for r in records))
    (directory / "output.raw").write_bytes(b"x" * offset)
    return records


def _position(directory: Path, offset: int) -> int:
    fd = os.open(directory / "output.idx", os.O_RDONLY)
    try:
        return index_position(fd, offset)
    finally:
        os.close(fd)


def _records_from(directory: Path, position: int) -> list[list[object]]:
    with (directory / "output.idx").open("rb") as f:
        f.seek(position)
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("offset", [0, 1, 99, 100, 101, 2_000_000, 3_999_900, 3_999_950, 4_000_000])
def test_every_record_at_or_after_the_offset_is_read_and_little_before(tmp_path: Path, offset: int) -> None:
    records = _history(tmp_path)
    tail = _records_from(tmp_path, _position(tmp_path, offset))
    assert [r for r in records if int(r[2]) >= offset] == [r for r in tail if int(r[2]) >= offset]
    skipped = len(records) - len(tail)
    assert skipped >= offset // CHUNK - PROBE_RECORDS, f"read {len(tail)} records from offset {offset}: too many"


def test_nonce_records_written_before_their_output_are_read_from_where_they_point(tmp_path: Path) -> None:
    """An `n` record points past the journal's size when written, into the batch of output after it (up to a
    PTY read of 256 KiB and more): a follower taken up at the first of 2,000 marks in one batch (more index
    than the search's probe) gets them, and the resize after them."""
    at, batch = 20_000, 300_000
    nonce = at * CHUNK + 100_000
    marks = [[at * 0.02, "n", nonce + 100 * k, None] for k in range(2_000)]
    extra = {at: marks, 35_000: [[700.0, "r", 35_000 * CHUNK + batch - CHUNK, "100x30"]]}
    _history(tmp_path, extra, big={at: batch})
    end = RECORDS * CHUNK + batch - CHUNK
    follower = JournalFollower(tmp_path, nonce, 1000.0)
    try:
        assert follower.read(nonce + 250, 1 << 20).marks == {nonce + 100 * k: 1000.0 + at * 0.02 for k in range(3)}
        sizes = []
        while follower.behind(end):
            sizes += [b.size for b in [follower.read(end, 1 << 20)] if b.size]
        assert sizes == [(100, 30)]
    finally:
        follower.close()


def test_records_at_the_offset_after_output_that_ends_there_are_read(tmp_path: Path) -> None:
    """Inputs, a resize and a marker at the offset where an output record's bytes end are written after it
    (the journal reached that size with those bytes): all are read, 3,000 keystrokes of input among them."""
    at = 30_000
    there = (at + 1) * CHUNK  # where output record `at` ends
    inputs = [[600.0, "i", there, "YQ=="]] * 3_000
    _history(tmp_path, {at + 1: [*inputs, [600.0, "r", there, "90x20"], [600.0, "m", there, "x"]]})
    tail = _records_from(tmp_path, _position(tmp_path, there))
    assert [r[1] for r in tail if r[2] == there] == ["i"] * 3_000 + ["r", "m", "o"]


def test_resizes_since_an_offset(tmp_path: Path) -> None:
    resizes = {i: [[i * 0.02, "r", i * CHUNK, f"{80 + i % 7}x24"]] for i in range(0, RECORDS, 5_000)}
    _history(tmp_path, resizes)
    since = 25_000 * CHUNK
    found = read_kind(tmp_path, "r", since)
    assert [e.offset for e in found if e.offset >= since] == [i * CHUNK for i in resizes if i * CHUNK >= since]
    assert [e.offset for e in read_kind(tmp_path, "r")] == [i * CHUNK for i in resizes]
