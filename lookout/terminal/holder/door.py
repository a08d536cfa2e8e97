"""The holder's listening socket: who it lets in, and what it does when its process runs out of descriptors.

A program in the terminal can connect to its own holder as often as it likes (same user). The holder takes
at most MAX_CLIENTS connections at once (one more is closed at once, so the backlog drains); when accept
fails for want of descriptors (EMFILE, ENFILE) or memory, the socket is left unwatched for PAUSE_S instead
of being accepted again in a loop, and the log says so once, when it starts and when it ends (with how many
accepts it refused): the daemon's connection, already open, keeps being served. A program that keeps the
holder going in and out of its limit has at most one such spell logged per QUIET_S; the others are counted
in the next spell's first line (and holder.log as a whole is capped: lookout.terminal.holder.holder_log).
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import time
from collections.abc import Callable

from lookout.terminal.holder import protocol as proto
from lookout.terminal.holder.holder_log import log

MAX_CLIENTS = 64
PAUSE_S = 1.0
QUIET_S = 60.0
"""At most one spell without descriptors is logged (its start and its end) per this long."""
_SHORT = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class Door:
    def __init__(
        self,
        listener: socket.socket,
        selector: selectors.BaseSelector,
        on_connect: Callable[[int], None],
        deadlines: dict[str, tuple[float, Callable[[], None]]],
    ) -> None:
        self.listener, self.selector, self.on_connect, self.deadlines = listener, selector, on_connect, deadlines
        self.short = False
        """Out of descriptors at the last accept (said once in the log, until an accept works again)."""
        self._spell = _Spell()

    def open(self) -> None:
        self.selector.register(self.listener, selectors.EVENT_READ, self.on_connect)

    def accept(self, clients: int) -> socket.socket | None:
        """The next connection to serve, or None: none waits, this holder is out of descriptors (the socket
        rests PAUSE_S), it serves MAX_CLIENTS already, or the peer is another user (each closed at once)."""
        try:
            sock, _ = self.listener.accept()
        except BlockingIOError:
            return None
        except OSError as exc:
            if exc.errno not in _SHORT:
                raise
            if not self.short:
                self._spell.begin(exc.strerror or str(exc))
            self._spell.refused += 1
            self.short = True
            self.selector.unregister(self.listener)
            self.deadlines["door"] = (time.monotonic() + PAUSE_S, self.open)
            return None
        if self.short:
            self._spell.end()
            self.short = False
        if clients >= MAX_CLIENTS or proto.peer_uid(sock) != os.getuid():
            sock.close()
            return None
        return sock


class _Spell:
    """What the log says of the spells without descriptors: the start and end of one per QUIET_S."""

    def __init__(self) -> None:
        self.told_at: float | None = None
        self.telling = False
        """The current spell's start was logged (so its end is)."""
        self.refused = 0
        self.began = 0.0
        self.untold = 0
        """Spells since the last one logged."""

    def begin(self, why: str) -> None:
        now = time.monotonic()
        self.began, self.refused = now, 0
        self.telling = self.told_at is None or now - self.told_at >= QUIET_S
        if not self.telling:
            self.untold += 1
            return
        more = f" ({self.untold} more such spells since the last logged)" if self.untold else ""
        log(f"cannot take connections ({why}): resting {PAUSE_S:g} s at a time until it can{more}")
        self.told_at, self.untold = now, 0

    def end(self) -> None:
        if self.telling:
            log(f"taking connections again after {time.monotonic() - self.began:.1f} s "
                f"({self.refused} accepts refused)")  # fmt: skip
