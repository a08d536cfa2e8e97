"""Stream text for regex waits: noise removed, positions mapped back to journal offsets."""
from __future__ import annotations

import re

from lookout.terminal.waits.stream_text import clean_stream


def test_escapes_and_carriage_returns_are_removed() -> None:
    st = clean_stream(b"\x1b[1;32mgreen\x1b[0m\r\n\x1b]0;title\x07next\x1bPdcs\x1b\\ line\r\n", 0)
    assert st.text == "green\nnext line\n"


def test_match_end_maps_to_the_byte_after_the_match() -> None:
    raw = b"\x1b[32mhel\x1b[0mlo\r\nworld \xe2\x9c\x93 done"
    st = clean_stream(raw, 1000)
    for pattern, expected_tail in [("hello", b"lo"), ("world", b"world"), ("\u2713", b"\xe2\x9c\x93"), ("done", b"done")]:
        m = re.search(pattern, st.text)
        assert m is not None
        end = st.raw_offset(m.end()) - 1000
        assert raw[:end].endswith(expected_tail)


def test_undecodable_bytes_keep_offsets_exact() -> None:
    raw = b"a\xff\xfeb\x1b[0mc"
    st = clean_stream(raw, 0)
    m = re.search("c", st.text)
    assert m is not None and st.raw_offset(m.end()) == len(raw)


def test_empty_and_all_noise() -> None:
    assert clean_stream(b"", 5).text == ""
    st = clean_stream(b"\x1b[0m\r", 5)
    assert st.text == "" and st.raw_offset(0) == 5
