"""What a client asks of a new terminal (lookout.terminal.registry.TerminalRegistry.create)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TerminalSpec:
    """What a client asks for; `command` is None (the user's shell), a string (run by the shell) or argv."""

    command: str | list[str] | None = None
    cwd: str | None = None
    env: dict[str, str] | None = None
    cols: int = 120
    rows: int = 40
    name: str | None = None
    shell_integration: bool = True
    """Lookout's hooks, for the user's shell or a bare bash or zsh (see lookout.terminal.process.shell_integration)."""
