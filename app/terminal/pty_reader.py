"""One thread that reads the PTY of every terminal, so the event loop never waits in a read.

A read from a PTY master takes a while even on a non-blocking descriptor: the kernel moves a program's
output into the line discipline's 4 KB buffer in a worker thread, and the read waits for that work, 4 KB at
a time. In a flood this waiting was the largest share of the event loop's time, and every request queued
behind it. Here a thread waits instead: it watches every master with epoll (one shot per descriptor), reads
a batch when one is readable and hands it to the loop (`Feed.take`). It goes on reading that descriptor
until MAX_PENDING bytes wait for the loop, and then only once the loop has taken them and asks
(`Feed.resume`): a program that writes faster than its output is taken waits in its write, as it would in
any terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

BATCH_BYTES = 256 << 10
"""Most bytes read from one descriptor in one go."""
MAX_PENDING = 256 << 10
"""The thread goes on reading a descriptor until this much of its output waits for the loop: the thread
needs the GIL after each read, which the busy loop gives up only every few milliseconds, so one batch at
a time would cap a flood at a batch per switch interval."""
_ARMED = select.EPOLLIN | select.EPOLLONESHOT
_POLL_S = 0.5
"""How long the thread waits in epoll before it looks whether it was closed."""


def read_batch(fd: int, limit: int = BATCH_BYTES) -> tuple[bytes, bool]:
    """What `fd` holds now, up to about `limit` bytes, and whether the other side has hung up (EOF, or EIO:
    every holder of the slave side has closed it)."""
    chunks: list[bytes] = []
    total = 0
    hangup = False
    while total < limit:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            break
        except OSError:
            hangup = True
            break
        if not data:
            hangup = True
            break
        chunks.append(data)
        total += len(data)
    return b"".join(chunks), hangup


class Feed:
    """One descriptor's output on its way from the reading thread to the loop. `take`, `resume` and `stop`
    are called on the loop."""

    def __init__(self, reader: PtyReader, fd: int, loop: asyncio.AbstractEventLoop, ready: Callable[[], None]) -> None:
        self.fd = fd
        self._reader = reader
        self._loop = loop
        self._ready = ready
        self._lock = threading.Lock()
        """Held while the thread reads the descriptor, and by `stop`."""
        self._open = True
        self._chunks: list[bytes] = []
        self._size = 0
        self._hangup = False
        self._posted = False

    def take(self) -> tuple[bytes, bool]:
        """The output read so far, and whether the other side has hung up."""
        with self._lock:
            chunks, self._chunks = self._chunks, []
            self._size = 0
            self._posted = False
            return b"".join(chunks), self._hangup

    def resume(self) -> None:
        """Read again once the descriptor is readable (after the last batch was taken)."""
        self._reader._arm(self)

    def stop(self) -> None:
        """Stop watching the descriptor; once this returns the thread will not touch it again (a read in
        progress is waited for), so the caller may close it. What was read already can still be taken."""
        with self._lock:
            self._open = False
        self._reader._forget(self)

    def _read(self) -> None:
        """On the thread: read a batch and tell the loop, unless the feed was stopped meanwhile."""
        with self._lock:
            if not self._open:
                return
            data, hangup = read_batch(self.fd)
            if not (data or hangup):  # readable, yet nothing to read: watch it again
                self._reader._arm(self)
                return
            self._chunks.append(data)
            self._size += len(data)
            self._hangup = self._hangup or hangup
            if not self._hangup and self._size < MAX_PENDING:
                self._reader._arm(self)
            if self._posted:
                return
            self._posted = True
        with contextlib.suppress(RuntimeError):  # the loop is closed: the daemon is ending
            self._loop.call_soon_threadsafe(self._ready)


class PtyReader:
    """The reading thread and the descriptors it watches (`add` is called on the loop); the thread starts
    with the first `add` and ends with `close`."""

    def __init__(self) -> None:
        self._epoll = select.epoll()
        self._feeds: dict[int, Feed] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, fd: int, ready: Callable[[], None]) -> Feed:
        """Watch `fd` (non-blocking): `ready` is called on the loop when a batch can be taken."""
        feed = Feed(self, fd, asyncio.get_running_loop(), ready)
        self._feeds[fd] = feed
        self._epoll.register(fd, _ARMED)
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="pty-reader", daemon=True)
            self._thread.start()
        return feed

    def _arm(self, feed: Feed) -> None:
        if self._feeds.get(feed.fd) is feed:
            self._epoll.modify(feed.fd, _ARMED)

    def _forget(self, feed: Feed) -> None:
        if self._feeds.get(feed.fd) is feed:
            del self._feeds[feed.fd]
            with contextlib.suppress(OSError):
                self._epoll.unregister(feed.fd)

    def close(self) -> None:
        """End the thread (within _POLL_S) and release epoll."""
        self._closed = True
        if self._thread is not None:
            self._thread.join()
        self._epoll.close()

    def _run(self) -> None:
        while not self._closed:
            for fd, _ in self._epoll.poll(_POLL_S):
                feed = self._feeds.get(fd)
                if feed is None:
                    continue
                try:
                    feed._read()
                except Exception:  # one terminal's trouble must not stop the reading of all the others
                    log.exception("reading the PTY on fd %d failed", fd)
