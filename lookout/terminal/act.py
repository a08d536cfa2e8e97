"""One agent step on a terminal: send input, wait until a condition holds, read the screen."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lookout.core.errors import BadInput
from lookout.terminal.input.steps import InputStep
from lookout.terminal.screen.layers import ViewOptions
from lookout.terminal.waits.waiting import Until, WaitResult

if TYPE_CHECKING:
    from lookout.terminal.session import TerminalSession

SCREEN_DETAIL = ("terminal", "title", "alt_screen", "state", "raw_offset", "delta_cursor", "tokens")
"""Screen fields an act answer leaves out unless asked for detail (the wait's fields say the state and the
cursor to resume from; the rows are what the agent reads)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ActResult:
    sent: dict[str, Any] | None
    wait: WaitResult
    screen: dict[str, Any] | str

    def to_json(self, detail: bool = False) -> dict[str, Any]:
        """By default one resume cursor, the state, the exit code when something ended, what ended the wait
        and the screen; with `detail` also the input, every field of the wait and the screen's metadata."""
        if not detail:
            return {**self.wait.lean_json(), "screen": _lean_screen(self.screen)}
        return {**self.wait.lean_json(), "input": self.sent, "wait": self.wait.to_json(), "screen": self.screen}


def check_until(session: TerminalSession, until: Until) -> None:
    """A condition the terminal can never meet is bad input."""
    if until.empty:
        raise BadInput("until needs regex, stable_ms, state_in, exit or block_end", field="until")
    if until.block_end and not session.meta.shell_integration:
        raise BadInput(f"terminal {session.id} has no shell integration, so no blocks end", field="until.block_end")


async def act(
    session: TerminalSession,
    steps: Sequence[InputStep] | None,
    until: Until,
    timeout_ms: int,
    view: ViewOptions,
    scrollback: int = 0,
    changed_since: int | None = None,
    since: int | None = None,
) -> ActResult:
    """Send `steps` (if any), wait for `until` from there (see lookout.terminal.waits.waiting: after input, the echo is
    skipped and states are edges), then read the screen. Without steps the wait starts at `since` (a cursor
    of an earlier answer, to resume a wait), else now."""
    check_until(session, until)
    if steps and since is not None:
        raise BadInput("since resumes a wait without input: leave out input or since", field="since")
    if steps:
        await session.catch_up()  # the input's offset is then where the holder writes it, not behind it
    sent = session.send(*steps) if steps else None
    if sent is None and since is None:
        since = session.raw_offset
    waited = await session.wait(until, since, timeout_ms)
    screen = await session.screen(view, scrollback=scrollback, changed_since=changed_since)
    return ActResult(sent=sent, wait=waited, screen=screen)


def _lean_screen(screen: dict[str, Any] | str) -> dict[str, Any] | str:
    if isinstance(screen, str):
        return screen
    out = {key: value for key, value in screen.items() if key not in SCREEN_DETAIL}
    if out.get("viewport") == {"mode": "full"}:
        del out["viewport"]
    return out
