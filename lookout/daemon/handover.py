"""What a daemon and the one that replaces it (`lookout restart`) say to each other, over a socket pair the old
one makes when it starts the new one (the new one finds its end in `LOOKOUT_HANDOVER_FD`), one JSON object a
line:

- new -> old `{"step": "imported"}`: its code is loaded, its app built, and it accepts on the shared socket
  (what it accepts waits inside it until it has taken over); the old one stops accepting;
- old -> new `{"step": "released"}`: the old one accepts no more connections, has written what the new one
  takes up from, and has let go of the data dir's lock;
- new -> old `{"step": "serving", "pid": N}`: it holds the lock, has taken the terminals over and serves
  (or `{"step": "failed", "error": "..."}`: the old one takes everything back);
- old -> new `{"frame": {...}, "agent": ..., "ts": ...}`: a frame recorded by an answer the old one had
  begun and ends after the handover (the new one writes the timeline now).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

HANDOVER_ENV = "LOOKOUT_HANDOVER_FD"
MAX_LINE = 16 << 20


class HandoverFailed(Exception):
    """The other daemon did not do its part; the message says what happened instead."""


class _Channel:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    def send(self, **message: Any) -> None:
        if not self._writer.is_closing():
            self._writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or None when the other side has gone."""
        try:
            line = await self._reader.readline()
        except (ConnectionError, ValueError):  # ValueError: a line over the limit
            return None
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError:
            return None
        return message if isinstance(message, dict) else None

    async def expect(self, step: str, timeout: float | None) -> dict[str, Any]:
        try:
            async with asyncio.timeout(timeout):
                while (message := await self.receive()) is not None:
                    if message.get("step") == step:
                        return message
                    if message.get("step") == "failed":
                        raise HandoverFailed(str(message.get("error") or "it failed"))
        except TimeoutError:
            raise HandoverFailed(f"it did not say {step!r} within {timeout or 0:.0f} s") from None
        raise HandoverFailed(f"it ended before it said {step!r}")

    def close(self) -> None:
        self._writer.close()


async def _channel(sock: socket.socket) -> _Channel:
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_LINE)
    return _Channel(reader, writer)


class Successor:
    """The daemon this one starts to replace it, on the same listening socket."""

    def __init__(self, process: asyncio.subprocess.Process, channel: _Channel) -> None:
        self.process = process
        self.channel = channel
        self._loop = asyncio.get_running_loop()

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    async def start(cls, argv: Sequence[str], env: dict[str, str], fds: Sequence[int]) -> Successor:
        """Start `argv` (its stdout and stderr are this daemon's) with `fds` inherited and its end of the
        handover channel in HANDOVER_ENV."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, env={**env, HANDOVER_ENV: str(theirs.fileno())}, pass_fds=(*fds, theirs.fileno())
            )
        finally:
            theirs.close()
        return cls(process, await _channel(mine))

    async def expect(self, step: str, timeout: float) -> dict[str, Any]:
        try:
            return await self.channel.expect(step, timeout)
        except HandoverFailed as exc:
            code = self.process.returncode
            raise HandoverFailed(f"{exc}" + (f" (it exited with {code})" if code is not None else "")) from None

    def forward_frame(self, item: dict[str, Any]) -> None:
        """Hand a frame to it (thread-safe: frames are recorded from worker threads too)."""
        self._loop.call_soon_threadsafe(lambda: self.channel.send(**item))

    async def end(self, grace_s: float) -> None:
        """Let it end by itself within `grace_s` (a daemon that failed to take over first answers the requests it
        held, then ends), else kill it."""
        try:
            await asyncio.wait_for(self.process.wait(), grace_s)
        except TimeoutError:
            pass
        await self.kill()

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        self.channel.close()


class Predecessor:
    """The daemon this one replaces (when `lookout restart` started this one)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._channel: _Channel | None = None
        self._released = False

    @classmethod
    def from_environment(cls) -> Predecessor | None:
        fd = os.environ.pop(HANDOVER_ENV, None)
        return cls(int(fd)) if fd is not None and fd.isdigit() else None

    async def _connected(self) -> _Channel:
        if self._channel is None:
            sock = socket.socket(fileno=self._fd)
            sock.setblocking(False)
            self._channel = await _channel(sock)
        return self._channel

    async def tell(self, step: str, **fields: Any) -> None:
        (await self._connected()).send(step=step, **fields)

    async def released(self, timeout: float) -> None:
        """Return once the old daemon has let go of the data dir (or has ended)."""
        if self._released:
            return
        try:
            await (await self._connected()).expect("released", timeout)
        except HandoverFailed as exc:
            print(f"lookout: the daemon before this one: {exc}; taking over anyway", file=sys.stderr)

    async def released_to_standby(self) -> bool:
        """A standby (`lookout supervise --standby`): wait, without bound, until the supervisor says the daemon
        died (True), or has gone itself (False: the standby must not take anything over)."""
        try:
            await (await self._connected()).expect("released", None)
        except HandoverFailed:
            return False
        self._released = True
        return True

    async def frames(self) -> AsyncIterator[dict[str, Any]]:
        """The frames the old daemon forwards until it ends."""
        channel = await self._connected()
        while (message := await channel.receive()) is not None:
            if "frame" in message:
                yield message
