"""What a terminal is doing, derived from the PTY's termios flags, its foreground process group and the
alternate screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from lookout.terminal.process.tty import TtyFlags

State = Literal["idle", "running", "awaiting_input", "password", "tui", "exited"]
STATES: tuple[State, ...] = ("idle", "running", "awaiting_input", "password", "tui", "exited")
LINE_EDITOR_SHELLS = frozenset({"bash", "zsh", "fish"})
"""Shells that put the tty in raw mode at their prompt."""


def derive_state(
    *,
    exited: bool,
    alt_screen: bool,
    flags: TtyFlags | None,
    foreground: int | None,
    leader: int,
    leader_is_shell: bool,
    waits_for_input: Callable[[int], bool],
    command_running: bool | None = None,
    line_editor: bool = True,
) -> State:
    """The rules, first match wins:
    exited; tui (alternate screen); password (canonical input without echo: getpass, sudo, ssh);
    idle (a shell in the foreground at its prompt: its line editor has the tty in raw mode, or it reads the
    tty while no command runs); awaiting_input (the foreground program sleeps reading the terminal);
    running otherwise.

    A shell reading the tty in canonical mode is at its prompt, or runs `read`: `command_running` (from the
    shell integration's marks; None without them) tells which; without it, a shell with a line editor
    (`line_editor`: bash, zsh, fish) is running `read`, and any other (sh, dash) is at its prompt.
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
        if not waits_for_input(fg):
            return "running"
        at_prompt = not command_running if command_running is not None else not line_editor
        return "idle" if at_prompt else "awaiting_input"
    return "awaiting_input" if waits_for_input(fg) else "running"
