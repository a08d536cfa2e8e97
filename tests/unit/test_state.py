"""The state rules, on plain inputs."""
from __future__ import annotations

import pytest

from lookout.terminal.process.state import derive_state
from lookout.terminal.process.tty import TtyFlags

RAW = TtyFlags(canonical=False, echo=False)
COOKED = TtyFlags(canonical=True, echo=True)
SECRET = TtyFlags(canonical=True, echo=False)


def state(**kw: object) -> str:
    args = {"exited": False, "alt_screen": False, "flags": COOKED, "foreground": 10, "leader": 10,
            "leader_is_shell": True, "waits_for_input": lambda pid: False}
    args.update(kw)
    return derive_state(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"exited": True, "alt_screen": True}, "exited"),
        ({"alt_screen": True, "flags": SECRET}, "tui"),
        ({"flags": SECRET, "foreground": 11}, "password"),
        ({"flags": RAW}, "idle"),
        ({"flags": COOKED}, "running"),
        ({"flags": COOKED, "waits_for_input": lambda pid: pid == 10}, "awaiting_input"),
        ({"foreground": 11}, "running"),
        ({"foreground": 11, "waits_for_input": lambda pid: pid == 11}, "awaiting_input"),
        ({"leader_is_shell": False, "flags": RAW}, "running"),
        ({"leader_is_shell": False, "flags": RAW, "waits_for_input": lambda pid: True}, "awaiting_input"),
        ({"flags": None, "foreground": None}, "running"),
    ],
)
def test_rules(kw: dict[str, object], expected: str) -> None:
    assert state(**kw) == expected
