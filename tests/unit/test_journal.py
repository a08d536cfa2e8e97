"""The journal: lossless output, index records, limits."""
from __future__ import annotations

import base64
import itertools
import time
from pathlib import Path

from lookout.terminal.holder.journal import JournalWriter, open_journal
from lookout.terminal.journal.reader import raw_size, read_index, read_raw


def test_output_is_stored_losslessly_and_indexed(tmp_path: Path) -> None:
    j = JournalWriter(*open_journal(tmp_path), max_bytes=1 << 20)
    j.record("r", "80x24")
    j.write_output(b"\xff\x00abc")
    j.write_output(b"\xe2\x9c")
    j.write_output(b"\x93")
    j.record_input(b"ls\r", redact=False)
    j.record_input(b"secret\r", redact=True)
    j.record("x", 0)
    j.close()
    assert read_raw(tmp_path, 0, 100) == b"\xff\x00abc\xe2\x9c\x93"
    assert read_raw(tmp_path, 5, 2) == b"\xe2\x9c"
    assert raw_size(tmp_path) == 8
    entries = read_index(tmp_path)
    kinds = [e.kind for e in entries]
    assert kinds[0] == "r" and kinds[-1] == "x" and "o" in kinds
    assert sum(e.value for e in entries if e.kind == "o") == 8
    inputs = [e for e in entries if e.kind == "i"]
    assert base64.b64decode(inputs[0].value) == b"ls\r" and inputs[0].offset == 8
    assert inputs[1].value is None
    assert all(a.t <= b.t for a, b in itertools.pairwise(entries))


def test_limit_counts_what_is_not_stored(tmp_path: Path) -> None:
    j = JournalWriter(*open_journal(tmp_path), max_bytes=10)
    assert j.write_output(b"12345678") == 8
    assert j.write_output(b"abcdef") == 2
    assert j.size == 10 and j.dropped == 4
    j.close()
    assert read_raw(tmp_path, 0, 100) == b"12345678ab"


def test_reopening_appends(tmp_path: Path) -> None:
    j = JournalWriter(*open_journal(tmp_path), max_bytes=100)
    j.write_output(b"one")
    j.close()
    j = JournalWriter(*open_journal(tmp_path), max_bytes=100)
    assert j.size == 3
    j.write_output(b"two")
    j.close()
    assert read_raw(tmp_path, 0, 100) == b"onetwo"


def test_times_count_from_when_the_daemon_opened_the_terminal(tmp_path: Path) -> None:
    opened = time.time() - 5.0  # the holder took the spec up five seconds after the open (a loaded machine)
    j = JournalWriter(*open_journal(tmp_path), max_bytes=100, started_at=opened)
    j.record("r", "80x24")
    j.close()
    assert j.started_at == opened
    (resize,) = read_index(tmp_path)
    assert 5.0 <= resize.t < 6.0
    (tmp_path / "later").mkdir()
    later = JournalWriter(*open_journal(tmp_path / "later"), max_bytes=100, started_at=time.time() + 60)
    later.close()
    assert later.started_at <= time.time()  # never in the future: no time before t = 0
