"""The terminals an earlier run of the daemon left running, adopted after this one starts.

A start lists them at once from their files (lookout.terminal.origins.ToAdopt: their records, as an exited
terminal's), so the daemon serves before their holders have answered; each is adopted in the background,
ADOPTING_AT_ONCE at a time, and a request for one waits for its own adoption only, which is begun next if it
had not begun. Until then a listing shows it `adopting`, with the facts its files recorded. A daemon that stops
meanwhile begins no more of them: it waits only for those under way.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from lookout.core.errors import Conflict
from lookout.terminal.dormant import Dormant
from lookout.terminal.session import TerminalSession

log = logging.getLogger(__name__)

ADOPTING_AT_ONCE = 6
"""Adoptions under way at once: their files are read in workers, their holders' answers awaited on the loop (up
to 5 s for a holder that does not answer: lookout.terminal.process.holder_link.CONNECT_TIMEOUT_S). More at once
only make a requested one wait longer for a worker (100 busy terminals, every screen after a kill -9: 0.57 and
0.60 s with 6, 0.68 and 0.60 s with 16, runs alternated on a loaded machine)."""


class Adoptions:
    """The terminals to adopt, by id; `adopt` makes one's session (adopted, or lost with the reason: it does not
    raise for a terminal's own failures), `keep` takes it into the registry before anyone is told it is done, and
    `lose` makes the session of one whose adoption raised all the same (a bug): listed `lost`, with the reason."""

    def __init__(
        self,
        adopt: Callable[[Dormant], Awaitable[TerminalSession]],
        keep: Callable[[TerminalSession], None],
        lose: Callable[[Dormant, str], TerminalSession],
    ) -> None:
        self._adopt, self._keep, self._lose = adopt, keep, lose
        self._records: dict[str, Dormant] = {}
        """Every terminal not adopted yet, begun or not."""
        self._queue: OrderedDict[str, None] = OrderedDict()
        """Those not begun, the next first."""
        self._done: dict[str, asyncio.Future[TerminalSession]] = {}
        self._workers: list[asyncio.Task[None]] = []
        self._telling: asyncio.Task[None] | None = None

    def add(self, record: Dormant) -> None:
        self._records[record.meta.id] = record
        self._queue[record.meta.id] = None
        self._done[record.meta.id] = asyncio.get_running_loop().create_future()

    def begin(self) -> None:
        """Adopt every terminal added, in the background."""
        count = len(self._queue)
        self._workers = [asyncio.create_task(self._work()) for _ in range(min(ADOPTING_AT_ONCE, count))]
        if self._workers:
            self._telling = asyncio.create_task(self._tell_done(count, time.monotonic()))

    def __contains__(self, terminal_id: str) -> bool:
        return terminal_id in self._records

    def __len__(self) -> int:
        return len(self._records)

    def record(self, terminal_id: str) -> Dormant | None:
        return self._records.get(terminal_id)

    def records(self) -> list[Dormant]:
        return list(self._records.values())

    async def session(self, terminal_id: str) -> TerminalSession:
        """The terminal's session once it is adopted (begun next if it had not begun)."""
        if terminal_id in self._queue:
            self._queue.move_to_end(terminal_id, last=False)
        return await asyncio.shield(self._done[terminal_id])

    async def settled(self) -> None:
        """Until every terminal added is adopted (or `stop`ped)."""
        await asyncio.gather(*self._workers)

    def stop(self, why: str) -> list[str]:
        """Begin no more adoptions (the daemon stops: those not begun are left to their holders, for the next
        daemon to adopt); a request that waits for one is refused, Conflict `why`. The ids of those not begun."""
        left = list(self._queue)
        self._queue.clear()
        for terminal_id in left:
            done = self._done[terminal_id]
            self._forget(terminal_id)
            done.set_exception(Conflict(why))
            done.exception()  # (heard, also when nobody waited)
        return left

    async def _work(self) -> None:
        while self._queue:
            terminal_id, _ = self._queue.popitem(last=False)
            done = self._done[terminal_id]
            record = self._records[terminal_id]
            try:
                session = await self._adopt(record)
            except Exception as exc:  # (a bug): listed lost, never left out of the listings
                log.exception("terminal %s could not be adopted", terminal_id)
                session = self._lose(record, f"it could not be adopted: {type(exc).__name__}: {exc}")
            except BaseException as exc:  # (the loop ends): those who wait hear it
                self._forget(terminal_id)
                done.set_exception(exc)
                done.exception()  # (heard, also when nobody waited)
                raise
            self._keep(session)
            self._forget(terminal_id)
            done.set_result(session)

    def _forget(self, terminal_id: str) -> None:
        del self._records[terminal_id], self._done[terminal_id]

    async def _tell_done(self, count: int, began: float) -> None:
        await asyncio.gather(*self._workers, return_exceptions=True)
        log.info("adopted the %d terminals of the run before in %.0f ms", count, (time.monotonic() - began) * 1000)
