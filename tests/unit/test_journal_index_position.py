"""Taking a journal up from an offset reads its index's tail (lookout.terminal.journal.reader.index_position):
every record at or after the offset is read, and the history long before it is not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lookout.terminal.journal.follower import JournalFollower
from lookout.terminal.journal.reader import NONCE_REACH, index_position, read_kind

CHUNK = 100
RECORDS = 40_000
"""Output records of CHUNK bytes: a journal of 4 MB, an index of about 1 MB."""


def _history(directory: Path, extra: dict[int, list[list[object]]] | None = None) -> list[list[object]]:
    """An index as a holder writes it: output records in order, with `extra` records written before the
    output record of each index (an `n` record points into that output, a resize is at its start)."""
    records: list[list[object]] = []
    for i in range(RECORDS):
        records += (extra or {}).get(i, [])
        records.append([i * 0.02, "o", i * CHUNK, CHUNK])
    (directory / "output.idx").write_text("".join(json.dumps(r) + "\n" for r in records))
    (directory / "output.raw").write_bytes(b"x" * (RECORDS * CHUNK))
    return records


def _records_from(directory: Path, position: int) -> list[list[object]]:
    with (directory / "output.idx").open("rb") as f:
        f.seek(position)
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("offset", [0, 1, NONCE_REACH, NONCE_REACH + 1, 2_000_000, 3_999_900, 4_000_000])
def test_every_record_at_or_after_the_offset_is_read_and_little_before(tmp_path: Path, offset: int) -> None:
    records = _history(tmp_path)
    fd = os.open(tmp_path / "output.idx", os.O_RDONLY)
    try:
        position = index_position(fd, offset)
    finally:
        os.close(fd)
    tail = _records_from(tmp_path, position)
    assert [r for r in records if int(r[2]) >= offset] == [r for r in tail if int(r[2]) >= offset]
    skipped = len(records) - len(tail)
    least = max(0, offset - NONCE_REACH - 2 * (64 << 10) // 25 * CHUNK) // CHUNK  # within a probe (a line: ~25 bytes)
    assert skipped >= least, f"read {len(tail)} records from offset {offset}: the history before it was read too"


def test_a_nonce_record_written_before_its_output_is_read_from_far_ahead(tmp_path: Path) -> None:
    """An `n` record points past the journal's size when written, into the output it precedes: one that
    points NONCE_REACH ahead is still read by a follower taken up there."""
    at = 20_000
    ahead = at * CHUNK + NONCE_REACH - 1
    _history(tmp_path, {at: [[at * 0.02, "n", ahead, None]], 35_000: [[700.0, "r", 35_000 * CHUNK, "100x30"]]})
    follower = JournalFollower(tmp_path, ahead, 1000.0)
    try:
        batch = follower.read(ahead + 10, 1 << 20)
        assert batch.marks == {ahead: 1000.0 + at * 0.02}
        sizes = []
        while follower.behind(RECORDS * CHUNK):
            sizes += [b.size for b in [follower.read(RECORDS * CHUNK, 1 << 20)] if b.size]
        assert sizes == [(100, 30)]
    finally:
        follower.close()


def test_resizes_since_an_offset(tmp_path: Path) -> None:
    resizes = {i: [[i * 0.02, "r", i * CHUNK, f"{80 + i % 7}x24"]] for i in range(0, RECORDS, 5_000)}
    _history(tmp_path, resizes)
    since = 25_000 * CHUNK
    found = read_kind(tmp_path, "r", since)
    assert [e.offset for e in found if e.offset >= since] == [i * CHUNK for i in resizes if i * CHUNK >= since]
    assert [e.offset for e in read_kind(tmp_path, "r")] == [i * CHUNK for i in resizes]


def test_the_reach_of_a_nonce_record_covers_one_batch_read_from_the_pty() -> None:
    from lookout.terminal.holder.pty import _BUFFER, READ_BYTES

    assert NONCE_REACH >= READ_BYTES + len(_BUFFER) + 4096, "an `n` record may point past what the search reads"
