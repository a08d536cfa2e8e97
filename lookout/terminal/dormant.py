"""Exited terminals that cost the daemon no session until they are asked for.

An exited terminal whose files say all its session knows is let go: the registry keeps a small record of it (its
meta and what a listing shows) and builds its session again from its files (lookout.terminal.origins.recover)
when a client asks for it. The exited sessions asked for last are kept, KEPT at most; those of an earlier run
of the daemon are let go at start, so a daemon's memory does not grow with the terminals that have ended.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookout.core.leases import LeaseBook
from lookout.terminal.blocks.blocks import BlockTracker
from lookout.terminal.facts import facts
from lookout.terminal.frames import resource
from lookout.terminal.journal.persistence import GuardedWrites, TerminalMeta, load_snapshot
from lookout.terminal.journal.reader import raw_size
from lookout.terminal.session import TerminalSession

KEPT = 32
"""Exited sessions kept built, the ones asked for last."""


@dataclass(frozen=True, slots=True)
class Dormant:
    """An exited terminal let go: its meta, its files, and what its session said beyond its meta (as a listing
    shows it), so that it is listed the same (lookout.terminal.facts)."""

    meta: TerminalMeta
    directory: Path
    cwd: str | None
    blocks: dict[str, Any]
    title: str
    alt_screen: bool
    raw_size: int

    def describe(self, leases: LeaseBook, state: str = "exited") -> dict[str, Any]:
        """Its facts; `state`: `adopting` for a running terminal of the run before, not yet adopted
        (lookout.terminal.adoptions), listed from its record all the same."""
        return facts(
            self.meta, state=state, cwd=self.cwd, blocks=self.blocks, title=self.title, degraded=None,
            alt_screen=self.alt_screen, raw_size=self.raw_size, lease=leases.describe(resource(self.meta.id)),
        )  # fmt: skip


def recorded(directory: Path, meta: TerminalMeta) -> Dormant:
    """The record of an exited terminal of an earlier run (`meta`: its meta.json) read from its files, without
    building its session: what `let_go` makes of the session lookout.terminal.origins.recover builds of it.
    Blocking: call it in a thread."""
    saved = load_snapshot(directory)
    blocks = BlockTracker(directory, meta.shell_integration, GuardedWrites(meta.id))
    blocks.forged = saved.forged
    return Dormant(meta, directory, saved.cwd, blocks.describe(), saved.title, False, raw_size(directory))


def may_let_go(session: TerminalSession) -> bool:
    """Whether `session` has exited and its files hold all it knows: its meta is its own and written, nothing
    failed to be written, and no write is under way (a session whose terminal another daemon took over stays)."""
    return (
        session.meta.status == "exited"
        and not session.running
        and session.meta_known
        and session.degraded is None
        and not session.writes.released
        and session.screen_model.settled
    )


def let_go(session: TerminalSession) -> Dormant:
    """The record that stands for `session` from now on (see `may_let_go`); its screen engine is let go too."""
    listed = session.describe(fresh=False)
    record = Dormant(session.meta, session.directory, session.reported_cwd, session.blocks.describe(),
                     listed["title"], listed["alt_screen"], listed["raw_size"])  # fmt: skip
    session.screen_model.let_go()
    return record


class Recent:
    """The terminals asked for, the last one last: which exited sessions are kept."""

    def __init__(self) -> None:
        self._order: OrderedDict[str, None] = OrderedDict()

    def used(self, terminal_id: str) -> None:
        self._order[terminal_id] = None
        self._order.move_to_end(terminal_id)

    def forget(self, terminal_id: str) -> None:
        self._order.pop(terminal_id, None)

    def beyond(self, exited: list[TerminalSession]) -> list[TerminalSession]:
        """Which of `exited` to let go: those not asked for in this run, and those beyond the KEPT asked for last."""
        rank = {terminal_id: n for n, terminal_id in enumerate(self._order)}
        asked = sorted((s for s in exited if s.id in rank), key=lambda s: rank[s.id])
        return [s for s in exited if s.id not in rank] + asked[: max(0, len(asked) - KEPT)]
