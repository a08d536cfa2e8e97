"""A terminal's facts as the API shows them (`GET /v1/terminals/{id}`, listings): its meta and what its session,
or for an exited terminal let go its files, say of the rest (pure)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lookout.terminal.journal.persistence import TerminalMeta


def facts(
    meta: TerminalMeta,
    *,
    state: str,
    cwd: str | None,
    blocks: dict[str, Any],
    title: str,
    degraded: str | None,
    alt_screen: bool,
    raw_size: int,
    lease: dict[str, Any] | None,
) -> dict[str, Any]:
    """`cwd`: the one its shell reported last (None: the one it started in); `blocks`: BlockTracker.describe."""
    m = meta
    return {
        "id": m.id, "name": m.name, "command": m.command, "argv": m.argv, "pid": m.pid, "status": m.status,
        "exit_code": m.exit_code, "cols": m.cols, "rows": m.rows, "state": state, "cwd": cwd or m.cwd,
        "shell_integration": m.shell_integration, **blocks, "title": title, "degraded": degraded,
        "lost_reason": m.lost_reason, "ended_by": m.ended_by, "alt_screen": alt_screen, "raw_size": raw_size,
        "engine": m.engine, "created_at": m.created_at, "ended_at": m.ended_at, "lease": lease,
    }  # fmt: skip


SCREEN_CATCH_UP_S = 5.0
"""How long a screen read takes in output before it answers (a flood's backlog after a restart can be gigabytes):
longer, and it answers what was taken in, saying how far short that is (`behind`)."""


def behind(target: int | None, offset: int) -> dict[str, Any]:
    """A screen answer's `behind` when the ingest stopped at journal `offset` short of `target` (else nothing)."""
    if target is None or target <= offset:
        return {}
    return {"behind": {
        "raw_size": target, "bytes": target - offset,
        "note": f"this screen is the output up to raw_offset {offset}: the program wrote {target - offset} bytes more "
                "than lookout took in within the read's time; they are being taken in: read the screen again",
    }}  # fmt: skip


def screen_header(state: str, delta_cursor: int, target: int | None) -> Callable[[int], dict[str, Any]]:
    """A screen answer's header fields, given the journal offset of the screen it shows (which a worker's view
    knows only as it copies the screen: lookout.terminal.screen.model.ScreenModel.view)."""
    return lambda offset: {"state": state, "raw_offset": offset, "delta_cursor": delta_cursor, **behind(target, offset)}
