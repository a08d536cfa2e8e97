"""Where a checkpoint may cut the output stream (lookout.terminal.screen.sequence_boundary)."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from lookout.terminal.screen.sequence_boundary import TAIL_BYTES, cut_before


def cut(stream: bytes, good: int = 0) -> int | None:
    return cut_before(lambda offset, size: stream[offset : offset + size], len(stream), good)


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        (b"plain text", 10),
        (b"abc\x1b[21;42", 3),  # inside a CSI: cut before it
        (b"abc\x1b[21;42H", 11),
        (b"abc\x1b", 3),
        (b"x\x1b]0;title", 1),  # inside an OSC string
        (b"x\x1b]0;title\x07", 11),
        (b"x\x1b]0;title\x1b", 1),  # the ESC of its ST may be on its way: the OSC is still open
        (b"x\x1b]0;title\x1b\\", 12),
        (b"x\x1b]0;ti\x1b[1m", 11),  # an ESC aborts a string and starts the next sequence
        (b"x\x1bPq#0;2;0;0;0", 1),  # DCS
        (b"x\x1b(", 1),
        (b"x\x1b(B", 4),
        (b"x\x1b7", 3),
        ("x\u009b2".encode(), 1),  # a C1 CSI in UTF-8
        ("x\u009b2J".encode(), 5),
        ("x\u009d0;t\u009c".encode(), 8),  # a C1 OSC ended by a C1 ST
        ("caf\u00e9".encode(), 5),
        ("caf\u00e9".encode()[:-1], 3),  # half a character
        ("\u2764".encode()[:2], 0),
        ("\U0001F600".encode()[:3], 0),
        (b"\x1b[2\x18rest", 8),  # CAN aborts
    ],
)
def test_the_cut_is_the_end_or_where_an_unfinished_sequence_begins(stream: bytes, expected: int) -> None:
    assert cut(stream) == expected


def test_a_control_carried_out_inside_an_unfinished_sequence_leaves_the_cut_undecided() -> None:
    assert cut(b"x\x1b[2\n") is None
    assert cut(b"x\x1b[2\nJ") == 6


def _reading(stream: bytes) -> tuple[Callable[[int, int], bytes], list[tuple[int, int]]]:
    reads: list[tuple[int, int]] = []

    def read(offset: int, size: int) -> bytes:
        reads.append((offset, size))
        return stream[offset : offset + size]

    return read, reads


def test_a_long_stream_is_read_back_to_its_last_esc_or_to_the_last_good_cut() -> None:
    stream = b"a" * 100_000 + b"\x1b[1m" + b"b" * 1000 + b"\x1b[21;4"
    read, reads = _reading(stream)
    assert cut_before(read, len(stream), 0) == len(stream) - len(b"\x1b[21;4")
    assert sum(size for _, size in reads) <= TAIL_BYTES + 1  # the last ESC is in the tail (and the last byte)
    # colours, then more plain text than a tail holds: read back to the last ESC, whatever came before it
    coloured = b"\x1b[31mx\x1b[0m" * 10_000 + b"plain text\r\n" * 10_000
    read, reads = _reading(coloured)
    assert cut_before(read, len(coloured), 0) == len(coloured)
    assert sum(size for _, size in reads) <= len(b"plain text\r\n" * 10_000) + TAIL_BYTES + 1
    # plain text since the last good cut: read back to it, once
    read, reads = _reading(coloured)
    good = len(coloured) - 50_000
    assert cut_before(read, len(coloured), good) == len(coloured)
    assert sum(size for _, size in reads) == 50_000
    plain = b"\x1b]0;" + b"t" * (2 * TAIL_BYTES)  # an OSC longer than the tail: only the last good cut tells
    assert cut(plain) == 0
    assert cut(plain + b"\x07") == len(plain) + 1
