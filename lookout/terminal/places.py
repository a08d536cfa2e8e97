"""Where new terminals' files go, made before the terminals are asked for.

Making a file is the dearest step of opening a terminal: 0.1-0.8 ms of kernel time each on the ext4 of
lookout's test machines, against microseconds to open a file that exists or to rename one, and a terminal
has eight: its directory, `meta.json`, `events.jsonl`, the journal's `output.raw` and `output.idx`,
`holder.log`, its holder's socket, and `screen.jsonl` (which its first screen delta would make on the
event loop). So the daemon makes them for the next terminals ahead (POOL of them),
in a thread, once an open is done (so that it takes no processor from one in progress): each in `<data>/staging/<daemon pid>/<id>/`, its socket at `<data>/holders/<id>.sock` (where
nobody looks for it before the terminal exists). Opening a terminal then hands the journal's, the log's and
the socket's descriptors to its holder (lookout.terminal.holder.protocol.SPEC_FDS), writes `meta.json` and the
first event into files that exist, and renames the directory to `terminals/<id>`: a terminal appears whole,
or not at all.

A daemon removes what it made and did not use when it ends; a daemon that was killed leaves it, and the next
daemon to start removes the staging directories of the daemons that no longer run, and their sockets (and has
the holder of a terminal whose open was cut by the kill, so that nobody knows of it, end its program).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from lookout.core.ids import new_id
from lookout.core.private_files import DIR_MODE, make_dir, open_file
from lookout.core.storage import write_all
from lookout.terminal.holder import protocol as proto
from lookout.terminal.holder.journal import open_journal
from lookout.terminal.journal.deltas import SCREEN_DELTAS
from lookout.terminal.process.holders import stop_unlisted
from lookout.terminal.process.ladder import proc

log = logging.getLogger(__name__)

POOL = 2
"""Places made ahead: enough for terminals opened one after another, each made while the last is answered."""
STAGING = "staging"
SWEEP_S = 2.0
"""How long the start-up sweep waits, in all, for the holders of killed opens to answer (planted sockets that
accept and never answer cannot hold the start longer)."""


@dataclass(slots=True)
class Place:
    """A new terminal's files, made and open, in its staged directory, and its holder's listening socket."""

    id: str
    staged: Path
    meta_fd: int
    events_fd: int
    journal_fds: tuple[int, int]
    log_fd: int
    listener: socket.socket
    holders: Path

    @property
    def holder_fds(self) -> list[int]:
        """What its holder takes, in the order of proto.SPEC_FDS."""
        return [*self.journal_fds, self.log_fd, self.listener.fileno()]

    def handed_over(self) -> None:
        """Its holder has its own descriptors now (or failed to start): close this daemon's."""
        for fd in (*self.journal_fds, self.log_fd):
            os.close(fd)
        self.journal_fds, self.log_fd = (-1, -1), -1
        self.listener.close()

    def settle(self, root: Path, meta: bytes, first_event: bytes) -> Path:
        """Write `meta.json` and the first line of `events.jsonl`, then move the directory to `root`/<id>,
        which it returns."""
        try:
            write_all(self.meta_fd, meta)
            write_all(self.events_fd, first_event)
        finally:
            self._close_records()
        directory = root / self.id
        os.rename(self.staged, directory)  # never over a link or a file: a directory replaces only an empty one
        return directory

    def discard(self) -> None:
        """Remove what was made (an open that failed, or a daemon that ends)."""
        self._close_records()
        if self.log_fd >= 0:
            self.handed_over()
        holders_fd = proto.open_dir(self.holders)
        try:
            os.unlink(proto.socket_name(self.id), dir_fd=holders_fd)
        except FileNotFoundError:
            pass
        finally:
            os.close(holders_fd)
        shutil.rmtree(self.staged, ignore_errors=True)

    def _close_records(self) -> None:
        for fd in (self.meta_fd, self.events_fd):
            if fd >= 0:
                os.close(fd)
        self.meta_fd = self.events_fd = -1


class Places:
    """The places made ahead for one daemon's next terminals."""

    def __init__(self, data_dir: Path, holders: Path) -> None:
        self._root = data_dir / STAGING
        self._staging = self._root / str(os.getpid())
        self._holders = holders
        self._ready: deque[Place] = deque()
        self._filling: asyncio.Task[None] | None = None
        self._closed = False

    async def start(self) -> None:
        """Remove what daemons that no longer run left, then begin making places."""
        await asyncio.to_thread(self._sweep)
        self.fill()

    async def take(self) -> Place:
        """A place for a new terminal: one made ahead, else one made now (OSError when it cannot be). Call
        `fill` once the open is done."""
        return self._ready.popleft() if self._ready else await asyncio.to_thread(self._make)

    async def close(self) -> None:
        """Remove the places made and not used (the daemon ends)."""
        self._closed = True
        if self._filling is not None:
            await self._filling
        await asyncio.to_thread(self._remove)

    def fill(self) -> None:
        """Make places ahead again, up to POOL, in the background."""
        if not self._closed and len(self._ready) < POOL and (self._filling is None or self._filling.done()):
            self._filling = asyncio.create_task(self._fill_up())

    async def _fill_up(self) -> None:
        while not self._closed and len(self._ready) < POOL:
            try:
                self._ready.append(await asyncio.to_thread(self._make))
            except OSError as exc:  # a full disk...: the next open makes its own place, and says why it cannot
                log.warning("cannot make a place for the next terminal ahead: %s", exc)
                return

    def _make(self) -> Place:
        make_dir(self._staging)
        place_id = new_id("t")
        staged = self._staging / place_id
        os.mkdir(staged, DIR_MODE)
        opened: list[int] = []
        holders_fd = proto.open_dir(self._holders)
        try:
            for name in ("meta.json", "events.jsonl", "holder.log"):
                opened.append(open_file(staged / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND))
            os.close(open_file(staged / SCREEN_DELTAS, os.O_WRONLY | os.O_CREAT | os.O_EXCL))  # (its first delta's)
            journal_fds = open_journal(staged)
            opened += journal_fds
            listener = proto.listen(holders_fd, place_id)
        except OSError:
            for fd in opened:
                os.close(fd)
            shutil.rmtree(staged, ignore_errors=True)
            raise
        finally:
            os.close(holders_fd)
        return Place(place_id, staged, opened[0], opened[1], journal_fds, opened[2], listener, self._holders)

    def _remove(self) -> None:
        while self._ready:
            self._ready.popleft().discard()
        shutil.rmtree(self._staging, ignore_errors=True)

    def _sweep(self) -> None:
        """Remove the staging directories of daemons that no longer run (this daemon's pid too: one that ran
        before with the same pid), with the sockets made for them that nobody listens on; a program whose
        holder listens there was started by an open its daemon did not finish (nobody was told of it): its
        holder is told to end it. Nothing planted there ends a terminal that is listed (`terminals/<id>`: a
        finished open), no link is followed, and the holders asked get SWEEP_S in all, however many there are."""
        if not self._root.is_dir() or self._root.is_symlink():
            return
        deadline = time.monotonic() + SWEEP_S
        listed = self._root.parent / "terminals"
        for entry in self._root.iterdir():
            if not entry.name.isdigit() or (entry.name != str(os.getpid()) and _runs(int(entry.name))):
                continue
            try:
                if entry.is_symlink() or not entry.is_dir():
                    entry.unlink()
                    continue
                for staged in entry.iterdir():
                    if os.path.lexists(listed / staged.name):
                        log.warning("left terminal %s running: %s names it, but it is listed (its open finished): "
                                    "not a killed open's", staged.name, staged)  # fmt: skip
                    elif stop_unlisted(self._holders, staged.name, max(0.01, deadline - time.monotonic())):
                        log.warning("ended terminal %s: its daemon was killed while it opened it, and nobody was "
                                    "told of it", staged.name)  # fmt: skip
                shutil.rmtree(entry)
            except OSError as exc:
                log.warning("cannot remove %s, left by a daemon that no longer runs: %s", entry, exc)


def _runs(pid: int) -> bool:
    found = proc(pid, 0.0)
    return found is not None and found.alive
