import pytest
from hypothesis import given
from hypothesis import strategies as st

from lookout.terminal.input.keys import (
    UnknownKeyError,
    bracketed_paste,
    encode_keys,
    valid_key_names,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Enter", b"\r"),
        ("Tab", b"\t"),
        ("BTab", b"\x1b[Z"),
        ("Escape", b"\x1b"),
        ("BSpace", b"\x7f"),
        ("Space", b" "),
        ("Up", b"\x1b[A"),
        ("Down", b"\x1b[B"),
        ("Right", b"\x1b[C"),
        ("Left", b"\x1b[D"),
        ("Home", b"\x1b[H"),
        ("End", b"\x1b[F"),
        ("Insert", b"\x1b[2~"),
        ("IC", b"\x1b[2~"),
        ("Delete", b"\x1b[3~"),
        ("DC", b"\x1b[3~"),
        ("PageUp", b"\x1b[5~"),
        ("PPage", b"\x1b[5~"),
        ("PgUp", b"\x1b[5~"),
        ("PageDown", b"\x1b[6~"),
        ("NPage", b"\x1b[6~"),
        ("PgDn", b"\x1b[6~"),
    ],
)
def test_named_keys(name: str, expected: bytes) -> None:
    assert encode_keys([name]) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("F1", b"\x1bOP"), ("F2", b"\x1bOQ"), ("F3", b"\x1bOR"), ("F4", b"\x1bOS"),
        ("F5", b"\x1b[15~"), ("F6", b"\x1b[17~"), ("F7", b"\x1b[18~"), ("F8", b"\x1b[19~"),
        ("F9", b"\x1b[20~"), ("F10", b"\x1b[21~"), ("F11", b"\x1b[23~"), ("F12", b"\x1b[24~"),
    ],
)
def test_function_keys(name: str, expected: bytes) -> None:
    assert encode_keys([name]) == expected
    assert encode_keys([name], app_cursor=True) == expected


@pytest.mark.parametrize("name", ["enter", "ENTER", "eNtEr", "pageup", "PGDN", "bspace", "f12", "ic", "space"])
def test_named_keys_are_case_insensitive(name: str) -> None:
    canonical = {"enter": "Enter", "pageup": "PageUp", "pgdn": "PageDown", "bspace": "BSpace", "f12": "F12",
                 "ic": "Insert", "space": "Space"}[name.lower()]
    assert encode_keys([name]) == encode_keys([canonical])


def test_app_cursor_mode_switches_arrows_and_home_end_to_ss3() -> None:
    names = ["Up", "Down", "Right", "Left", "Home", "End"]
    assert encode_keys(names, app_cursor=True) == b"\x1bOA\x1bOB\x1bOC\x1bOD\x1bOH\x1bOF"
    assert encode_keys(names) == b"\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F"


def test_app_cursor_mode_leaves_editing_keys_and_modified_arrows_alone() -> None:
    assert encode_keys(["PageUp", "Delete", "C-Up", "Enter"], app_cursor=True) == b"\x1b[5~\x1b[3~\x1b[1;5A\r"


@pytest.mark.parametrize(("letter", "code"), [(chr(ord("a") + i), i + 1) for i in range(26)])
def test_ctrl_letters(letter: str, code: int) -> None:
    assert encode_keys([f"C-{letter}"]) == bytes([code])
    assert encode_keys([f"C-{letter.upper()}"]) == bytes([code])


def test_ctrl_c_is_etx_not_text() -> None:
    assert encode_keys(["C-c"]) == b"\x03"


@pytest.mark.parametrize(
    ("name", "expected"),
    [("C-@", b"\x00"), ("C-Space", b"\x00"), ("C-space", b"\x00"), ("C-[", b"\x1b"), ("C-\\", b"\x1c"),
     ("C-]", b"\x1d"), ("C-^", b"\x1e"), ("C-_", b"\x1f"), ("C-?", b"\x7f")],
)
def test_ctrl_symbols(name: str, expected: bytes) -> None:
    assert encode_keys([name]) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("M-x", b"\x1bx"), ("A-x", b"\x1bx"), ("M-X", b"\x1bX"), ("M-Enter", b"\x1b\r"), ("A-BSpace", b"\x1b\x7f"),
     ("M-Escape", b"\x1b\x1b"), ("M-/", b"\x1b/"), ("M-C-a", b"\x1b\x01"), ("C-M-a", b"\x1b\x01"),
     ("M-Space", b"\x1b "), ("M--", b"\x1b-"), ("M-S-Tab", b"\x1b\x1b[Z")],
)
def test_meta_prefixes_escape(name: str, expected: bytes) -> None:
    assert encode_keys([name]) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("S-Up", b"\x1b[1;2A"), ("M-Up", b"\x1b[1;3A"), ("A-Up", b"\x1b[1;3A"), ("S-M-Up", b"\x1b[1;4A"),
        ("C-Up", b"\x1b[1;5A"), ("C-S-Up", b"\x1b[1;6A"), ("S-C-Up", b"\x1b[1;6A"), ("C-M-Up", b"\x1b[1;7A"),
        ("C-M-S-Up", b"\x1b[1;8A"), ("C-Down", b"\x1b[1;5B"), ("C-Right", b"\x1b[1;5C"), ("C-Left", b"\x1b[1;5D"),
        ("S-Home", b"\x1b[1;2H"), ("C-End", b"\x1b[1;5F"), ("C-F1", b"\x1b[1;5P"), ("S-F4", b"\x1b[1;2S"),
        ("S-F5", b"\x1b[15;2~"), ("C-F12", b"\x1b[24;5~"), ("M-PageUp", b"\x1b[5;3~"), ("C-PgDn", b"\x1b[6;5~"),
        ("S-Delete", b"\x1b[3;2~"), ("C-IC", b"\x1b[2;5~"), ("C-up", b"\x1b[1;5A"),
    ],
)
def test_xterm_modifiers_on_special_keys(name: str, expected: bytes) -> None:
    assert encode_keys([name]) == expected
    assert encode_keys([name], app_cursor=True) == expected


def test_shift_tab_is_back_tab() -> None:
    assert encode_keys(["S-Tab"]) == b"\x1b[Z"


@pytest.mark.parametrize("char", ["a", "Z", "/", "-", "C", "M", "~", " ", "é", "€", "中"])
def test_single_printable_characters(char: str) -> None:
    assert encode_keys([char]) == char.encode()


def test_sequence_of_keys_concatenates() -> None:
    assert encode_keys(["l", "s", "Space", "-", "l", "Enter"]) == b"ls -l\r"
    assert encode_keys([]) == b""


@pytest.mark.parametrize(
    "name",
    ["Foo", "", "ls", "c-c", "C-", "C-Enter", "C-Tab", "C-é", "C-1", "S-a", "S-Enter", "\n", "\x1b", "M-Foo",
     "C-M-", "F13", "F0", "X-a"],
)
def test_unknown_keys_raise_with_valid_names(name: str) -> None:
    with pytest.raises(UnknownKeyError) as caught:
        encode_keys(["Enter", name])
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.name == name
    assert error.valid == valid_key_names()
    message = str(error)
    assert repr(name) in message
    for listed in ("Enter", "BSpace", "F1-F12", "C-a..C-z", "M-<key>", "<any single printable character>"):
        assert listed in message


def test_valid_key_names_is_a_fresh_list() -> None:
    names = valid_key_names()
    names.clear()
    assert "Enter" in valid_key_names()


def test_paste_wraps_when_enabled() -> None:
    assert bracketed_paste("echo hi", True) == b"\x1b[200~echo hi\x1b[201~"
    assert bracketed_paste("echo hi", False) == b"echo hi"


def test_paste_converts_line_feeds_to_carriage_returns() -> None:
    assert bracketed_paste("a\nb\r\nc\rd\n", False) == b"a\rb\rc\rd\r"
    assert bracketed_paste("a\nb", True) == b"\x1b[200~a\rb\x1b[201~"


def test_paste_encodes_utf8() -> None:
    assert bracketed_paste("héllo ✓", True) == b"\x1b[200~h\xc3\xa9llo \xe2\x9c\x93\x1b[201~"


@pytest.mark.parametrize("enabled", [True, False])
def test_paste_strips_injected_markers(enabled: bool) -> None:
    body = bracketed_paste("a\x1b[201~rm -rf /\x1b[200~b", enabled)
    assert b"\x1b[201~" not in body.removesuffix(b"\x1b[201~")
    assert body.count(b"\x1b[200~") == (1 if enabled else 0)
    assert b"arm -rf /b" in body


def test_paste_strips_markers_formed_by_stripping() -> None:
    body = bracketed_paste("x\x1b[20\x1b[201~1~y\x1b[2\x1b[200~00~z", True)
    assert body == b"\x1b[200~xyz\x1b[201~"


def test_paste_keeps_other_escapes() -> None:
    assert bracketed_paste("\x1b[31mred\x1b[0m", False) == b"\x1b[31mred\x1b[0m"


# ----------------------------------------------------------------------------- properties (hypothesis)

KEY_PARTS = st.sampled_from(["C-", "M-", "A-", "S-", "c-", "", "F", "Up", "a", "Z", "@", "[", "Space", "Home", "12"])


@given(st.one_of(st.text(max_size=12), st.lists(KEY_PARTS, max_size=4).map("".join)), st.booleans())
def test_any_key_name_encodes_or_is_refused_by_name(name: str, app_cursor: bool) -> None:
    try:
        encoded = encode_keys([name], app_cursor)
    except UnknownKeyError as exc:
        assert exc.name == name
    else:
        assert encoded, name


@given(st.text(), st.booleans())
def test_a_paste_is_wrapped_once_and_never_ends_early(text: str, enabled: bool) -> None:
    pasted = bracketed_paste(text, enabled)
    inner = pasted[6:-6] if enabled else pasted
    assert b"\x1b[200~" not in inner and b"\x1b[201~" not in inner and b"\n" not in inner
    if enabled:
        assert pasted.startswith(b"\x1b[200~") and pasted.endswith(b"\x1b[201~")
