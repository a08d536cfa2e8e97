from dataclasses import replace
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lookout.terminal.screen.scanner import (
    MAX_OSC_PAYLOAD,
    CwdChanged,
    ModeChanged,
    Query,
    ScanEvent,
    ShellMark,
    SideScanner,
    TitleChanged,
    query_reply,
)


def scan(data: bytes) -> list[ScanEvent]:
    return SideScanner().feed(data)


def scan_split(data: bytes, cuts: list[int]) -> list[ScanEvent]:
    """Feed `data` cut at `cuts`; return the events with `end` made absolute."""
    scanner = SideScanner()
    events: list[ScanEvent] = []
    bounds = [0, *sorted(set(cuts)), len(data)]
    for start, stop in pairwise(bounds):
        chunk = data[start:stop]
        for event in scanner.feed(chunk):
            assert 0 < event.end <= len(chunk)
            nonce_at = getattr(event, "nonce_at", None)
            if nonce_at is not None:
                event = replace(event, nonce_at=nonce_at + start)  # type: ignore[call-arg]
            events.append(replace(event, end=event.end + start))
    return events


# --- titles ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [b"0", b"2"])
@pytest.mark.parametrize("terminator", [b"\x07", b"\x1b\\"])
def test_title_with_bel_or_st(command: bytes, terminator: bytes) -> None:
    data = b"\x1b]" + command + b";my title" + terminator
    assert scan(data) == [TitleChanged(len(data), "my title")]


def test_icon_name_only_is_ignored() -> None:
    assert scan(b"\x1b]1;icon\x07") == []


def test_title_control_characters_removed_and_bad_utf8_replaced() -> None:
    data = b"\x1b]2;a\tb\nc\x7fd\xc2\x9be\x07"
    assert scan(data) == [TitleChanged(len(data), "abcde")]
    data = b"\x1b]0;caf\xe9 \xc3\xa9\x07"
    assert scan(data) == [TitleChanged(len(data), "caf\ufffd é")]


def test_empty_title_is_reported() -> None:
    assert scan(b"\x1b]2;\x07") == [TitleChanged(5, "")]


def test_osc_without_parameter_separator_is_ignored() -> None:
    assert scan(b"\x1b]0\x07\x1b]133\x07\x1b]7\x07") == []


# --- cwd ------------------------------------------------------------------------------------------------


def test_osc7_cwd_is_percent_decoded_and_host_ignored() -> None:
    data = b"\x1b]7;file://myhost/home/me/My%20Dir/%C3%A9t%C3%A9\x1b\\"
    assert scan(data) == [CwdChanged(len(data), "/home/me/My Dir/été")]


def test_osc7_empty_host_and_raw_characters() -> None:
    assert scan(b"\x1b]7;file:///tmp/a b?#\x07") == [CwdChanged(22, "/tmp/a b?#")]


def test_osc7_control_characters_removed() -> None:
    data = b"\x1b]7;file://h/tmp/x%0Ay%1B\x07"
    assert scan(data) == [CwdChanged(len(data), "/tmp/xy")]


@pytest.mark.parametrize("payload", [b"7;file://hostonly", b"7;/plain/path", b"7;http://h/x", b"7;file://"])
def test_osc7_without_usable_path_is_ignored(payload: bytes) -> None:
    assert scan(b"\x1b]" + payload + b"\x07") == []


def test_osc633_cwd_gives_mark_and_cwd() -> None:
    data = b"\x1b]633;P;Cwd=/srv/a\\x3bb\x07"
    assert scan(data) == [ShellMark(len(data), "P", ("Cwd=/srv/a;b",)), CwdChanged(len(data), "/srv/a;b")]
    marked = b"\x1b]633;P;Cwd=/srv;nonce=ab12\x07"
    assert scan(marked)[-1] == CwdChanged(len(marked), "/srv", marked.index(b"ab12"))


def test_osc633_other_property_is_only_a_mark() -> None:
    data = b"\x1b]633;P;IsWindows=False\x07"
    assert scan(data) == [ShellMark(len(data), "P", ("IsWindows=False",))]


# --- shell marks ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "code", "params"),
    [
        (b"133;A", "A", ()),
        (b"133;B", "B", ()),
        (b"133;C", "C", ()),
        (b"133;D", "D", ()),
        (b"133;D;0;nonce=xyz", "D", ("0", "nonce=xyz")),
        (b"133;A;aid=12;k=i", "A", ("aid=12", "k=i")),
        (b"133;D;", "D", ("",)),
        (b"633;A", "A", ()),
        (b"633;B", "B", ()),
        (b"633;C", "C", ()),
        (b"633;D;130", "D", ("130",)),
        (b"633;E;ls -l;n0nce", "E", ("ls -l", "n0nce")),
    ],
)
def test_shell_marks(payload: bytes, code: str, params: tuple[str, ...]) -> None:
    data = b"\x1b]" + payload + b"\x07"
    nonce_at = data.index(b"nonce=") + 6 if b"nonce=" in data else None
    assert scan(data) == [ShellMark(len(data), code, params, nonce_at)]


def test_osc633_command_is_unescaped() -> None:
    data = rb"\x1b]633;E;echo a\x3bb \\\\ c\x0ad\x5cx3b \xc3\xa9;nonce".replace(rb"\x1b", b"\x1b") + b"\x1b\\"
    assert scan(data) == [ShellMark(len(data), "E", ("echo a;b \\\\ c\nd\\x3b é", "nonce"))]


def test_osc633_backslash_not_followed_by_escape_is_kept() -> None:
    data = b"\x1b]633;E;a\\qb\\x4\x07"
    assert scan(data) == [ShellMark(len(data), "E", ("a\\qb\\x4",))]


@pytest.mark.parametrize(
    "payload", [b"133;E", b"133;P", b"133;", b"133;AB", b"633;F", b"633;", b"1330;A", b"33;A", b"133;\xff"]
)
def test_unknown_shell_codes_are_ignored(payload: bytes) -> None:
    assert scan(b"\x1b]" + payload + b"\x07") == []


def test_osc133_params_are_not_unescaped() -> None:
    data = b"\x1b]133;D;a\\x3b\x07"
    assert scan(data) == [ShellMark(len(data), "D", ("a\\x3b",))]


# --- modes ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "name"),
    [(b"1049", "alt_screen"), (b"1047", "alt_screen"), (b"47", "alt_screen"), (b"2004", "bracketed_paste"),
     (b"1", "app_cursor")],
)
def test_private_modes(mode: bytes, name: str) -> None:
    on = b"\x1b[?" + mode + b"h"
    off = b"\x1b[?" + mode + b"l"
    assert scan(on) == [ModeChanged(len(on), name, True)]
    assert scan(off) == [ModeChanged(len(off), name, False)]


def test_several_modes_in_one_sequence() -> None:
    assert scan(b"\x1b[?1049;25;2004h") == [
        ModeChanged(16, "alt_screen", True),
        ModeChanged(16, "bracketed_paste", True),
    ]
    assert scan(b"\x1b[?1;;02004l") == [
        ModeChanged(12, "app_cursor", False),
        ModeChanged(12, "bracketed_paste", False),
    ]


@pytest.mark.parametrize(
    "data", [b"\x1b[1049h", b"\x1b[?25h", b"\x1b[?12l", b"\x1b[?h", b"\x1b[?1049", b"\x1b[?1049m"]
)
def test_other_modes_and_ansi_modes_are_ignored(data: bytes) -> None:
    assert scan(data) == []


# --- queries --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "kind"),
    [(b"\x1b[c", "da1"), (b"\x1b[0c", "da1"), (b"\x1b[>c", "da2"), (b"\x1b[>0c", "da2"), (b"\x1b[5n", "dsr"),
     (b"\x1b[6n", "cpr")],
)
def test_queries(data: bytes, kind: str) -> None:
    assert scan(data) == [Query(len(data), kind)]


@pytest.mark.parametrize("data", [b"\x1b[1c", b"\x1b[=c", b"\x1b[?6n", b"\x1b[4n", b"\x1b[>1c", b"\x1b[00c"])
def test_non_queries_are_ignored(data: bytes) -> None:
    assert scan(data) == []


def test_query_replies() -> None:
    assert query_reply("da1", 0, 0) == b"\x1b[?62;22c"
    assert query_reply("da2", 0, 0) == b"\x1b[>1;10;0c"
    assert query_reply("dsr", 3, 4) == b"\x1b[0n"
    assert query_reply("cpr", 0, 0) == b"\x1b[1;1R"
    assert query_reply("cpr", 23, 79) == b"\x1b[24;80R"
    with pytest.raises(ValueError, match="nope"):
        query_reply("nope", 0, 0)


# --- OSC termination, abort and bounds ------------------------------------------------------------------


def test_aborted_osc_does_not_swallow_following_sequence() -> None:
    data = b"\x1b]0;never ends\x1b[?1049h\x1b]0;next\x07"
    assert scan(data) == [ModeChanged(data.index(b"h") + 1, "alt_screen", True), TitleChanged(len(data), "next")]


@pytest.mark.parametrize("abort", [b"\x18", b"\x1a"])
def test_can_and_sub_abort_osc(abort: bytes) -> None:
    assert scan(b"\x1b]0;title" + abort + b"rest\x07") == []


def test_unterminated_osc_across_chunks_does_not_hide_later_sequences() -> None:
    scanner = SideScanner()
    assert scanner.feed(b"\x1b]2;partial") == []
    assert scanner.feed(b" more text") == []
    assert scanner.feed(b"\x1b[6n") == [Query(4, "cpr")]


def test_osc_at_payload_limit_is_reported() -> None:
    title = b"t" * (MAX_OSC_PAYLOAD - 2)
    data = b"\x1b]2;" + title + b"\x07"
    assert scan(data) == [TitleChanged(len(data), title.decode())]
    assert scan_split(data, [len(data) // 2, len(data) - 1]) == [TitleChanged(len(data), title.decode())]


@pytest.mark.parametrize("terminator", [b"\x07", b"\x1b\\"])
def test_oversized_osc_is_dropped(terminator: bytes) -> None:
    data = b"\x1b]2;" + b"t" * (MAX_OSC_PAYLOAD - 1) + terminator + b"\x1b]2;ok\x07"
    assert scan(data) == [TitleChanged(len(data), "ok")]
    assert scan_split(data, [100, MAX_OSC_PAYLOAD, MAX_OSC_PAYLOAD + 3]) == [TitleChanged(len(data), "ok")]


def test_unterminated_osc_flood_is_not_buffered() -> None:
    scanner = SideScanner()
    assert scanner.feed(b"\x1b]0;") == []
    for _ in range(100):
        assert scanner.feed(b"x" * 65536) == []
        assert len(scanner._carry) <= MAX_OSC_PAYLOAD + 3
    assert scanner._carry == b""
    assert scanner.feed(b"\x07\x1b[?2004h") == [ModeChanged(9, "bracketed_paste", True)]


def test_long_csi_parameters_are_not_buffered() -> None:
    scanner = SideScanner()
    scanner.feed(b"\x1b[?")
    scanner.feed(b"1;" * 100_000)
    assert scanner._carry == b""
    assert scanner.feed(b"h\x1b[5n") == [Query(5, "dsr")]


# --- chunks and offsets ---------------------------------------------------------------------------------

MIXED = (
    b"\x1b[32mok\x1b[0m\r\n"
    b"\x1b]0;user@host: ~\x07"
    b"\x1b]133;A\x07$ \x1b]133;B\x07"
    b"\x1b]633;E;vim a\\x3bb;n1\x1b\\"
    b"\x1b]133;C\x07"
    b"\x1b[?1049h\x1b[?1h\x1b[c\x1b[>c\x1b[5n\x1b[6n\x1b[2J\x1b[H"
    b"\x1b]2;vim \xe2\x9c\x93\x1b\\"
    b"\x1b]2;aborted\x1b[?2004l"
    b"\x1b[?1049;1;2004l"
    b"\x1b]7;file://h/w%20d\x07"
    b"\x1b]633;P;Cwd=/p\x07"
    b"\x1b]133;D;0;nonce=xyz\x07"
    b"\x1b]0;" + b"x" * 5000 + b"\x07"
    b"\x1b]1;icon\x07\x1b[38;5;12mblue\x1b[0m"
    b"\x1b"
)


def expected_mixed() -> list[ScanEvent]:
    def end(marker: bytes) -> int:
        return MIXED.index(marker) + len(marker)

    return [
        TitleChanged(end(b"~\x07"), "user@host: ~"),
        ShellMark(end(b"133;A\x07"), "A", ()),
        ShellMark(end(b"133;B\x07"), "B", ()),
        ShellMark(end(b"n1\x1b\\"), "E", ("vim a;b", "n1")),
        ShellMark(end(b"133;C\x07"), "C", ()),
        ModeChanged(end(b"?1049h"), "alt_screen", True),
        ModeChanged(end(b"?1h"), "app_cursor", True),
        Query(end(b"[c"), "da1"),
        Query(end(b">c"), "da2"),
        Query(end(b"5n"), "dsr"),
        Query(end(b"6n"), "cpr"),
        TitleChanged(end(b"\x9c\x93\x1b\\"), "vim ✓"),
        ModeChanged(end(b"?2004l"), "bracketed_paste", False),
        ModeChanged(end(b"2004l\x1b[?1049;1;2004l"), "alt_screen", False),
        ModeChanged(end(b"2004l\x1b[?1049;1;2004l"), "app_cursor", False),
        ModeChanged(end(b"2004l\x1b[?1049;1;2004l"), "bracketed_paste", False),
        CwdChanged(end(b"w%20d\x07"), "/w d"),
        ShellMark(end(b"Cwd=/p\x07"), "P", ("Cwd=/p",)),
        CwdChanged(end(b"Cwd=/p\x07"), "/p"),
        ShellMark(end(b"xyz\x07"), "D", ("0", "nonce=xyz"), MIXED.index(b"nonce=xyz") + 6),
    ]


def test_mixed_chunk_events_and_offsets() -> None:
    assert scan(MIXED) == expected_mixed()


def test_mixed_input_split_at_every_position() -> None:
    expected = expected_mixed()
    for cut in range(1, len(MIXED)):
        assert scan_split(MIXED, [cut]) == expected, cut


def test_mixed_input_fed_byte_by_byte() -> None:
    assert scan_split(MIXED, list(range(1, len(MIXED)))) == expected_mixed()


SHORT = b"a\x1b]0;t\x1b\\\x1b]133;D;1\x07\x1b[?1049;2004h\x1b[>0c\x1b]2;x\x1b[6n\x1b]7;file://h/%41\x07b"


def test_short_input_split_at_every_pair_of_positions() -> None:
    expected = scan(SHORT)
    assert len(expected) == 7
    for first in range(1, len(SHORT)):
        for second in range(first, len(SHORT)):
            assert scan_split(SHORT, [first, second]) == expected, (first, second)


FRAGMENTS = [
    b"\x1b]0;title\x07", b"\x1b]2;t\x1b\\", b"\x1b]1;icon\x07", b"\x1b]7;file://h/a%20b\x07",
    b"\x1b]133;D;0;nonce=x\x07", b"\x1b]633;E;ls\\x3b\\\\;n\x07", b"\x1b]633;P;Cwd=/x\x1b\\",
    b"\x1b[?1049;2004h", b"\x1b[?1l", b"\x1b[c", b"\x1b[0c", b"\x1b[>0c", b"\x1b[5n", b"\x1b[6n", b"\x1b[0m",
    b"\x1b[38;5;1m", b"\x1b", b"\x1b]", b"\x1b[", b"\x1b[?", b"\x1b[>", b"\x07", b"\x1b\\", b"\\", b"\x18", b";",
    b"0", b"1", b"2", b"h", b"c", b"n", b"text", b"\r\n", b"\xe2\x9c\x93", b"\xff",
    b"\x1b]2;" + b"y" * (MAX_OSC_PAYLOAD - 3), b"y" * 64, b";" * 60,
]


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=8)), max_size=40),
    data=st.data(),
)
def test_any_split_gives_the_same_events(parts: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(parts)
    cut = st.integers(min_value=0, max_value=len(stream))
    cuts = data.draw(st.lists(cut, max_size=12))
    assert scan_split(stream, cuts) == scan(stream)


def test_chunk_without_escape_is_scanned_and_carry_cleared() -> None:
    scanner = SideScanner()
    assert scanner.feed(b"\x1b[?10") == []
    big = b"log line without escapes\r\n" * 400_000
    assert scanner.feed(big) == []
    assert scanner.feed(b"49h") == []
    assert scanner.feed(b"x" * 10_000_000) == []
    assert scanner.feed(b"\x1b[6n") == [Query(4, "cpr")]


def test_large_chunk_with_sequences_at_both_ends() -> None:
    data = b"\x1b[?2004h" + b"\x1b[1mword\x1b[0m " * 1_000_000 + b"\x1b]2;done\x07"
    assert scan(data) == [ModeChanged(8, "bracketed_paste", True), TitleChanged(len(data), "done")]


def test_scanner_does_not_carry_finished_or_foreign_sequences() -> None:
    scanner = SideScanner()
    scanner.feed(b"\x1b]0;x\x07")
    assert scanner._carry == b""
    scanner.feed(b"\x1b[0m")
    assert scanner._carry == b""
    scanner.feed(b"\x1b(")
    assert scanner._carry == b""
