"""What a terminal is doing, derived from the PTY's termios flags, its foreground process group and the
alternate screen."""
from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from app.terminal.pty_process import TtyFlags

State = Literal["idle", "running", "awaiting_input", "password", "tui", "exited"]
STATES: tuple[State, ...] = ("idle", "running", "awaiting_input", "password", "tui", "exited")


def derive_state(
    *,
    exited: bool,
    alt_screen: bool,
    flags: TtyFlags | None,
    foreground: int | None,
    leader: int,
    leader_is_shell: bool,
    waits_for_input: Callable[[int], bool],
) -> State:
    """The rules, first match wins:
    exited; tui (alternate screen); password (canonical input without echo: getpass, sudo, ssh);
    idle (a shell in the foreground at its prompt: readline has the tty in raw mode, or it reads it);
    awaiting_input (the foreground program sleeps reading the terminal); running otherwise.
    """
    if exited:
        return "exited"
    if alt_screen:
        return "tui"
    if flags is not None and flags.canonical and not flags.echo:
        return "password"
    fg = foreground if foreground is not None else leader
    if fg == leader and leader_is_shell:
        if flags is not None and not flags.canonical:
            return "idle"
        return "awaiting_input" if waits_for_input(fg) else "running"
    return "awaiting_input" if waits_for_input(fg) else "running"
