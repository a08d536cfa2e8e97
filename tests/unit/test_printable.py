"""lookout.core.printable: what lookout prints to a person's terminal (names, commands, titles, errors) carries no
control character, as tmux shows session names (issue 35)."""
from __future__ import annotations

import pytest

from lookout.core.printable import has_controls, printable, without_controls

ATTACKS = {
    "OSC 52 (clipboard)": "\x1b]52;c;Y3VybCBldmlsfHNo\x07",
    "OSC 0 (title)": "\x1b]0;owned\x1b\\",
    "CSI 2J (clear)": "\x1b[2J",
    "CSI 8t (resize)": "\x1b[8;1;1t",
    "C1 CSI": "\x9b2J",
    "C1 OSC": "\x9d52;c;eA==\x9c",
    "DEL and NUL": "a\x7f\x00b",
}


@pytest.mark.parametrize("text", ATTACKS.values(), ids=ATTACKS.keys())
def test_no_control_character_survives(text: str) -> None:
    shown = printable(text)
    assert not has_controls(shown)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in shown)


def test_escapes_are_visible_and_octal_as_tmux_shows_them() -> None:
    assert printable("a\x1b[2Jb") == "a\\033[2Jb"
    assert printable("\x07\x7f\x9b") == "\\007\\177\\233"
    assert printable("tab\tnew\nline\rend") == "tab\\tnew\\nline\\rend"


def test_a_backslash_is_doubled_so_an_escape_always_means_a_control_character() -> None:
    assert printable("\\033") == "\\\\033"
    assert printable("\\033") != printable("\x1b")


def test_text_without_controls_is_unchanged() -> None:
    text = "build: make -j4 && ./run 'héllo' 日本語 🎉 – ok"
    assert printable(text) == text
    assert not has_controls(text)


def test_a_lone_surrogate_is_escaped_so_printing_never_fails() -> None:
    shown = printable("a\ud800b")
    assert shown == "a\\ud800b"
    shown.encode("utf-8")  # would raise for the surrogate itself


def test_labels_can_be_cleaned_instead() -> None:
    assert without_controls("agent\x1b[2J\x9b one") == "agent[2J one"


def test_agent_names_lose_c1_controls_too() -> None:
    from lookout.api.agent import agent_name

    assert agent_name("ag\u009b2J\u001b]0;x\u0007ent".encode()) == "ag2J]0;xent"
