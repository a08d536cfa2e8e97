"""`lookout attach ID`: a person's terminal on one of lookout's terminals, through the daemon's raw WebSocket
stream (so it works from another machine as well as this one).

The person's terminal goes into raw mode and its alternate screen; the screen is drawn at once from the
stream's hydration, then live, by a local screen engine that follows the stream (lookout.terminal.screen.engines) and a
painter that draws it at the PTY's size, padded in a larger window, and in a smaller one the part that holds
the cursor, with a status line that says so (lookout.clients.attach.painter, lookout.clients.attach.status): watching never
resizes the agent's PTY. `--resize` takes the PTY over: it is resized to the window (and follows it),
which the daemon records in the timeline as this client's doing. Keys go to the program (not with
`--read-only`); the detach key (`C-\\` unless `--detach-key`) leaves, and the program goes on. On leaving,
for whatever reason (detach, the program's exit, the daemon dropping the connection, a signal), the person's
terminal is restored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import termios
import tty
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import websockets

from lookout.clients.attach.painter import ENTER, LEAVE, View, follow, key_name, paint
from lookout.clients.attach.status import lease_row, status_line
from lookout.terminal.screen.engines import create_engine
from lookout.terminal.screen.engines.base import ScreenEngine
from lookout.terminal.screen.scanner import SideScanner, TitleChanged

FRAME_S = 1 / 30
"""Repaints are coalesced to at most this often."""
AGENT = "attach"


@dataclass(frozen=True, slots=True)
class AttachOptions:
    url: str
    token: str
    terminal_id: str
    read_only: bool = False
    resize: bool = False
    detach_key: int = 0x1C
    take_over: bool = False
    """Type into the terminal even while another hand holds its lease (the daemon records it)."""


class Attached:
    """One attachment: the connection, the local screen, the person's terminal."""

    def __init__(self, options: AttachOptions, ws: Any, out: int) -> None:
        self.options = options
        self.ws = ws
        self.out = out
        self.engine: ScreenEngine | None = None
        self.view: View | None = None
        """The part of the screen painted last (a smaller window follows the cursor from there)."""
        self.name = ""
        self.title = ""
        self.notice = ""
        """Shown on the last row while set: the lease another hand holds (keys are refused)."""
        self._titles = SideScanner()
        self.outcome: tuple[int, str] = (1, "the daemon closed the connection")
        self._paint_due: asyncio.TimerHandle | None = None
        self._done = asyncio.get_running_loop().create_future()
        self._outgoing: asyncio.Queue[str | bytes] = asyncio.Queue()
        """What goes to the daemon, in order (keys as binary messages, resizes as JSON)."""

    def window(self) -> tuple[int, int]:
        size = shutil.get_terminal_size()
        return size.columns, size.lines

    def repaint(self) -> None:
        self._paint_due = None
        engine = self.engine
        if engine is None:
            return
        cols, rows = self.window()
        screen = (engine.cols, engine.rows)
        room = rows - 1 if self.notice and rows > 1 else rows  # the notice's row
        self.view = view = follow(screen, (cols, room), engine.cursor(), self.view)
        status = ""
        if self.notice:
            status = lease_row(self.notice, cols)
        elif view.clipped:
            key = key_name(self.options.detach_key)
            status = status_line(self.options.terminal_id, self.name, self.title, screen, view, key, cols)
        self._write(paint(engine, cols, rows, view, status))

    def _feed(self, data: bytes) -> None:
        """Output of the program: into the local screen, and its title changes noted."""
        assert self.engine is not None
        self.engine.feed(data)
        for event in self._titles.feed(data):
            if isinstance(event, TitleChanged):
                self.title = event.title

    def schedule_paint(self) -> None:
        if self._paint_due is None:
            self._paint_due = asyncio.get_running_loop().call_later(FRAME_S, self.repaint)

    def _write(self, text: str) -> None:
        data = text.encode()
        while data:
            try:
                data = data[os.write(self.out, data) :]
            except BlockingIOError:
                continue

    def take_over(self) -> None:
        """`--resize`: the PTY follows this window."""
        cols, rows = self.window()
        self._outgoing.put_nowait(json.dumps({"type": "resize", "cols": cols, "rows": rows}))

    def on_window_change(self) -> None:
        if self.options.resize:
            self.take_over()
        self.schedule_paint()

    def on_keys(self, data: bytes) -> None:
        detach = self.options.detach_key in data
        if detach:
            data = data[: data.index(self.options.detach_key)]
        if data and not self.options.read_only:
            self._outgoing.put_nowait(data)
        if detach:
            self.finish(0, "detached; the program goes on")

    async def send(self) -> None:
        while True:
            await self.ws.send(await self._outgoing.get())

    def finish(self, code: int, why: str) -> None:
        if not self._done.done():
            self.outcome = (code, why)
            self._done.set_result(None)

    async def receive(self) -> None:
        async for message in self.ws:
            if isinstance(message, bytes):
                if self.engine is not None:
                    self._feed(message)
                    self.schedule_paint()
                continue
            event = json.loads(message)
            kind = event.get("type")
            if kind == "hydrate":
                self.engine = create_engine("avt", event["cols"], event["rows"], 0)
                self.name = str(event.get("name") or "")
                self._leased(event.get("lease"))
                self._feed(event["data"].encode())
                if self.options.resize:
                    self.take_over()
                self.repaint()
            elif kind == "resize" and self.engine is not None:
                self.engine.resize(event["cols"], event["rows"])
                self.repaint()
            elif kind == "exit":
                self.repaint()
                self.finish(0, f"the program exited (code {event.get('exit_code')})")
                return
            elif kind == "error" and event.get("error", {}).get("code") == "leased":  # keys refused: watch on
                held = event["error"].get("details") or {}
                self.notice = (f"keys refused: held by {held.get('holder')!r} until {held.get('expires_at')} "
                               "(attach --take-over types)")  # fmt: skip
                self.repaint()
            elif kind == "error":
                self.finish(1, str(event.get("error", {}).get("message", event)))
                return
        self.finish(1, "the daemon closed the connection")

    def _leased(self, lease: Any) -> None:
        """The notice of a lease another hand holds (keys are refused unless `--take-over`)."""
        if not isinstance(lease, dict) or lease.get("holder") == AGENT or self.options.read_only:
            return
        typing = "your keys go in anyway" if self.options.take_over else "keys refused (--take-over types)"
        self.notice = f"held by {lease.get('holder')!r} until {lease.get('expires_at')}: {typing}"

    async def run(self) -> None:
        tasks = [asyncio.ensure_future(self.receive()), asyncio.ensure_future(self.send())]
        try:
            await asyncio.wait([*tasks, self._done], return_when=asyncio.FIRST_COMPLETED)
            while not self._outgoing.empty():  # keys typed just before the detach key still go
                await self.ws.send(self._outgoing.get_nowait())
        except websockets.ConnectionClosed:
            pass
        finally:
            for task in tasks:
                task.cancel()
            if self._paint_due is not None:
                self._paint_due.cancel()


def stream_url(url: str, terminal_id: str, token: str, take_over: bool = False) -> str:
    base = url.rstrip("/")
    base = "ws" + base[4:] if base.startswith("http") else base
    return f"{base}/v1/terminals/{quote(terminal_id)}/stream?mode=raw&agent={AGENT}&token={quote(token)}" + (
        "&take_over=true" if take_over else "")  # fmt: skip


async def attach(options: AttachOptions) -> tuple[int, str]:
    """Attach this process's terminal (stdin and stdout) to the terminal; returns (exit status, why it ended)."""
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if not os.isatty(stdin) or not os.isatty(stdout):
        return 2, "attach needs a terminal (stdin and stdout)"
    try:
        ws = await websockets.connect(
            stream_url(options.url, options.terminal_id, options.token, options.take_over),
            max_size=None,
            open_timeout=10,
        )
    except (OSError, websockets.InvalidHandshake, TimeoutError) as exc:
        return 1, f"cannot reach the terminal at {options.url}: {exc}"
    saved = termios.tcgetattr(stdin)
    loop = asyncio.get_running_loop()
    attached = Attached(options, ws, stdout)
    try:
        tty.setraw(stdin)
        os.write(stdout, ENTER.encode())
        loop.add_reader(stdin, lambda: attached.on_keys(os.read(stdin, 65536)))
        loop.add_signal_handler(signal.SIGWINCH, attached.on_window_change)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, attached.finish, 1, "ended by a signal")
        await attached.run()
    finally:
        loop.remove_reader(stdin)
        for sig in (signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)
        os.write(stdout, LEAVE.encode())
        termios.tcsetattr(stdin, termios.TCSAFLUSH, saved)
        with contextlib.suppress(Exception):
            await ws.close()
    return attached.outcome
