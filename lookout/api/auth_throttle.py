"""Slowing a client that keeps presenting wrong tokens, without blocking anyone else or the event loop."""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Record:
    failures: int = 0
    last_failure: float = 0.0
    next_turn: float = 0.0


class AuthThrottle:
    """Per client address: after `free` wrong tokens in a row, every attempt (right or wrong) first waits its
    turn, `base` seconds doubling with each further failure up to `cap`. Turns are taken one after another, so
    guesses sent in parallel are slowed as much as guesses in a row; an attempt whose turn is further away than
    `max_wait` is refused at once (429) rather than held. A right token clears the count; so do `forget_s`
    seconds without a failure. At most `max_clients` addresses are remembered (the oldest are dropped)."""

    def __init__(self, free: int = 5, base: float = 0.5, cap: float = 4.0, max_wait: float = 30.0,
                 forget_s: float = 300.0, max_clients: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.free, self.base, self.cap, self.max_wait = free, base, cap, max_wait
        self.forget_s, self.max_clients, self.clock = forget_s, max_clients, clock
        self._clients: OrderedDict[str, _Record] = OrderedDict()

    def delay(self, client: str) -> float:
        """Seconds the client's next attempt waits for its turn (0 while it has failed fewer than `free` times)."""
        record = self._record(client)
        if record is None or record.failures < self.free:
            return 0.0
        return min(self.cap, self.base * 2 ** (record.failures - self.free))

    def retry_after(self, client: str) -> int | None:
        """The `Retry-After` (whole seconds) a refusal tells the client, when it is being slowed."""
        delay = self.delay(client)
        return math.ceil(delay) if delay else None

    async def wait_turn(self, client: str) -> bool:
        """Wait for this attempt's turn; False when the turn is too far away to hold the request for it."""
        delay = self.delay(client)
        if not delay:
            return True
        record = self._clients[client]
        now = self.clock()
        turn = max(now, record.next_turn) + delay
        if turn - now > self.max_wait:
            return False
        record.next_turn = turn
        await asyncio.sleep(turn - now)
        return True

    def failed(self, client: str) -> None:
        record = self._record(client) or _Record()
        record.failures += 1
        record.last_failure = self.clock()
        self._clients[client] = record
        self._clients.move_to_end(client)
        while len(self._clients) > self.max_clients:
            self._clients.popitem(last=False)

    def succeeded(self, client: str) -> None:
        self._clients.pop(client, None)

    def _record(self, client: str) -> _Record | None:
        record = self._clients.get(client)
        if record is not None and self.clock() - record.last_failure > self.forget_s:
            del self._clients[client]
            return None
        return record
