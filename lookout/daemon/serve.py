"""`lookout serve`: the daemon's life around its app.

- **One per data dir.** The data dir's lock (lookout.daemon.lock) is taken before anything is touched; a second
  daemon exits at once naming the first.
- **A socket that outlives it.** The listening socket comes from systemd, the supervisor or the daemon
  before this one, or is bound here (lookout.daemon.listen).
- **Hot restart** (`lookout restart`, SIGHUP), as nginx upgrades its binary: this daemon starts the new one on
  the same listening socket and goes on serving while the new one imports; the new one accepts on the socket
  (requests wait inside it, `GET /healthz` answers at once), then this one stops accepting, holds the requests
  that still reach it, lets the short ones in flight end, leaves the terminals and the timeline to the new one
  and lets go of the lock; the new one takes the lock, adopts the terminals and serves what waited. Requests begun here end here (a wait runs to its end: the
  terminals are still followed, read-only); those that still arrive here are passed to the new daemon
  (lookout.api.handover). This daemon then ends once nothing is left in flight. If the new one cannot start, this
  one never stopped serving.
- **A clean stop** (SIGTERM, SIGINT) answers the waits in flight at once, with the cursor to resume from, and
  leaves the terminals to their holders.
- **systemd** is told READY, RELOADING, STOPPING and MAINPID (sd_notify: Type=notify, NotifyAccess=all), so it
  follows the daemon across a hot restart.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from lookout.core import tokens
from lookout.daemon import priority
from lookout.daemon.control import ControlServer, Progress
from lookout.daemon.handover import HandoverFailed, Predecessor, Successor
from lookout.daemon.listen import LISTEN_FD_ENV, Listener
from lookout.daemon.lock import DataDirLock
from lookout.daemon.notify import notify

if TYPE_CHECKING:
    from fastapi import FastAPI

    from lookout.api.handover import HandoverGate
    from lookout.config import Settings
    from lookout.daemon.http_server import DaemonServer

log = logging.getLogger("lookout")

IMPORT_TIMEOUT_S = 120.0
"""How long a new daemon may take to load its code and build its app (a loaded machine: tens of seconds)."""
SETTLE_S = 10.0
"""How long the short requests in flight may take to end before the terminals are let go."""
TAKEOVER_TIMEOUT_S = 300.0
"""How long a new daemon may take to adopt the terminals once the data dir is its."""
LOCK_WAIT_S = 30.0
FAILED_SUCCESSOR_GRACE_S = 10.0
"""How long a new daemon that failed to take over is given to answer the requests it held (503, send it again)
and end, before it is killed and this daemon takes everything back."""
EXIT_CHECK_S = 0.1
WARM_ENV = "LOOKOUT_WARM_MCP"
"""The MCP toolset choices the daemon before served (`;`-separated), for the new daemon to build first."""
STANDBY_ENV = "LOOKOUT_STANDBY"
"""Set to 1 by `lookout supervise --standby` for the daemon it keeps ready (lookout.daemon.supervisor)."""
READ_AHEAD_EVERY_S = 5.0
"""How often a standby reads the records of the terminals that have exited meanwhile (lookout.terminal.read_ahead)."""
WARM_TOKENIZER_ENV = "LOOKOUT_WARM_TOKENIZER"
"""Set to 1 when the daemon before had loaded the tokenizer: the new daemon loads it before it accepts."""
LONGEST_DRAIN_S = 330.0
"""After a hot restart, this daemon ends when nothing is in flight any more, at the latest after this long
(the longest wait is 300 s)."""


class Lifecycle:
    """What the app's lifespan asks of the process it runs in (lookout.server), and hot restarts."""

    def __init__(self, settings: Settings, argv: Sequence[str], listener: Listener, lock: DataDirLock,
                 predecessor: Predecessor | None) -> None:  # fmt: skip
        self.settings = settings
        self.argv = list(argv)
        self.listener = listener
        self.lock = lock
        self.predecessor = predecessor
        self.app: FastAPI | None = None
        self.server: DaemonServer | None = None
        self.released = False
        """This daemon has left the data dir to the daemon that replaced it."""
        self._control = ControlServer(settings.data_dir, self._on_request)
        self._restarting = False
        self.failed = False
        """This daemon could not take over from the one before it (it ends)."""
        self._spare: socket.socket | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.standby = predecessor is not None and os.environ.pop(STANDBY_ENV, "") == "1"
        """Its predecessor is a supervisor: it takes over only once told the daemon died."""
        self.nice_to_take_back: int | None = None
        """The CPU priority this new daemon prepared below (lookout.daemon.priority), taken back as it accepts."""

    # ----------------------------------------------------------------- start

    @property
    def taking_over(self) -> bool:
        """A daemon still holds the data dir until `take_over` has taken it (a hot restart)."""
        return self.predecessor is not None

    async def prepare(self) -> None:
        """Before this daemon accepts, in a hot restart: load what the daemon before had loaded, and make the
        requests it will accept wait until it has taken over (lookout.api.handover)."""
        await self._warm()
        if self.nice_to_take_back is not None:
            priority.take_back(self.nice_to_take_back)
            log.info("restart: this daemon (pid %d) prepared at nice %+d and takes back nice %d", os.getpid(),
                     priority.PREPARING_NICE, self.nice_to_take_back)  # fmt: skip
        if self.standby:
            await self._stand_by()
        self._gate.adopting()

    async def _stand_by(self) -> None:
        """Ready, not accepting, until the supervisor says its daemon died; it ends with the supervisor."""
        assert self.predecessor is not None and self.app is not None
        log.info("standby: this daemon (pid %d) is ready; it takes over when the daemon dies", os.getpid())
        released = asyncio.ensure_future(self.predecessor.released_to_standby())
        while not released.done():  # meanwhile, the exited terminals' records are read ahead of its start (`_warm`
            await asyncio.wait({released}, timeout=READ_AHEAD_EVERY_S)  # read them first)
            if not released.done():
                await self.app.state.terminals.read_ahead()
        if not released.result():
            log.info("standby: the supervisor has gone; this daemon (pid %d) ends", os.getpid())
            os._exit(0)  # it holds nothing yet (no lock, no terminal, no file): nothing to end cleanly
        log.info("standby: the daemon died; this daemon (pid %d) takes over", os.getpid())

    async def take_over(self, adopt: Callable[[], Awaitable[None]]) -> None:
        """Once this daemon accepts on the shared socket: ask the daemon before to stop accepting and let go of
        the data dir, take its lock, `adopt` what it holds, then serve the requests that waited. If that fails,
        they are refused (503, send it again), the daemon before takes everything back and this one ends."""
        assert self.predecessor is not None and self.server is not None
        try:
            await self.server.accepting.wait()
            log.info("restart: this daemon (pid %d) accepts on the shared socket; it serves once it has taken over",
                     os.getpid())  # fmt: skip
            accepting = time.monotonic()
            await self.predecessor.tell("imported")
            await self.predecessor.released(TAKEOVER_TIMEOUT_S)
            released = time.monotonic()
            await asyncio.to_thread(self.lock.acquire, LOCK_WAIT_S)
            locked = time.monotonic()
            await adopt()
            log.info("restart: took over %.0f ms after accepting (the daemon before let go in %.0f ms; the lock in %.0f "
                     "ms, adopting in %.0f ms)", (time.monotonic() - accepting) * 1000, (released - accepting) * 1000,
                     (locked - released) * 1000, (time.monotonic() - locked) * 1000)  # fmt: skip
        except Exception as exc:  # told to the daemon before and to the requests that wait, then this one ends
            log.exception("restart: taking over failed")
            self.failed = True
            self._gate.adoption_failed(f"lookout's restart failed: the new daemon could not take over ({exc}); the "
                                       "daemon before it serves again: send the request again")  # fmt: skip
            await self.predecessor.tell("failed", error=str(exc) or type(exc).__name__)
            self.server.should_exit = True
            return
        await self.serving()  # first: the daemon before passes what it holds as this one serves what waited here
        self._gate.adopted()

    async def _warm(self) -> None:
        """Before accepting: load what the daemon before had loaded (its MCP servers, the tokenizer), include every
        route (lookout.api.later_routes), let every router work out its routes and read the exited terminals'
        records ahead (lookout.terminal.read_ahead), while that daemon still serves, so the first requests here
        wait for none of it."""
        assert self.app is not None
        await self.app.state.terminals.read_ahead()
        warm = os.environ.pop(WARM_ENV, "")
        await self.app.state.mcp.warm([choice for choice in warm.split(";") if choice])
        if os.environ.pop(WARM_TOKENIZER_ENV, "") == "1":
            began = time.monotonic()
            await asyncio.to_thread(tokens.load_soon().join)
            log.info("restart: this daemon (pid %d) loaded the tokenizer in %.0f ms before it accepts", os.getpid(),
                     (time.monotonic() - began) * 1000)  # fmt: skip
        await self.app.state.later_routes.ready()
        for path in ("/v1/terminals", "/v1/devices", "/v1/pages", "/v1/profiles", "/v1/timeline/frames", "/mcp"):
            for route in self.app.router.routes:
                route.matches({"type": "http", "path": path, "method": "GET", "root_path": "", "headers": []})

    async def serving(self) -> None:
        """The app has started: listen for `lookout restart`, and say so (to the daemon before, to systemd)."""
        await self._control.start()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, lambda: self._spawn(self.restart(None)))
        notify(f"READY=1\nMAINPID={os.getpid()}\nSTATUS=serving")
        host, port = self.listener.address
        since = _since_start_s()
        after = f", {since:.2f} s after its start" if since is not None else ""
        print(f"lookout: ready at http://{host}:{port} (pid {os.getpid()}{after})", file=sys.stderr, flush=True)
        if self.predecessor is not None:
            await self.predecessor.tell("serving", pid=os.getpid())
            self._spawn(self._record_forwarded_frames(self.predecessor))

    async def _record_forwarded_frames(self, predecessor: Predecessor) -> None:
        assert self.app is not None
        async for item in predecessor.frames():
            self.app.state.timeline.record_forwarded(item)

    # ----------------------------------------------------------------- requests on the control socket

    async def _on_request(self, request: dict[str, Any], progress: Progress) -> None:
        op = request.get("op")
        if op == "restart":  # its own task: the control socket closes under it, the restart goes on
            await asyncio.shield(self._spawn(self.restart(progress)))
        elif op == "prune" and self.app is not None:
            from lookout.core.errors import LookoutError

            try:
                await progress(await self.app.state.terminals.prune(dry_run=bool(request.get("dry_run"))))
            except LookoutError as exc:
                await progress({"error": exc.message})
        elif op == "status":
            from lookout import __version__

            await progress({"pid": os.getpid(), "version": __version__, "restarting": self._restarting})
        else:
            await progress({"error": f"unknown op {op!r}"})

    # ----------------------------------------------------------------- hot restart

    async def restart(self, progress: Progress | None) -> None:
        """Hand the data dir and the listening socket over to a new daemon (see the module docstring)."""

        async def say(message: dict[str, Any]) -> None:
            log.info("restart: %s", message)
            if progress is not None:
                try:
                    await progress(message)
                except OSError:
                    pass

        if self._restarting or self.released:
            await say({"error": "a restart is already under way"})
            return
        self._restarting = True
        try:
            await self._restart(say)
        except Exception as exc:  # a fault must be told, not lost in a task
            log.exception("restart failed")
            await say({"error": f"the restart failed: {exc!r}; see the daemon's log"})
        finally:
            self._restarting = False

    async def _restart(self, say: Progress) -> None:
        notify("RELOADING=1\nSTATUS=starting a new daemon")
        import httpx  # noqa: F401 (the handover gate passes requests with it: loaded now, not while they wait)

        fd = self.listener.inheritable_fd()
        assert self.app is not None
        env = {**os.environ, LISTEN_FD_ENV: str(fd), WARM_ENV: ";".join(self.app.state.mcp.toolsets),
               WARM_TOKENIZER_ENV: "1" if tokens.loading() else ""}  # fmt: skip
        successor = await Successor.start(self.argv, env, [fd])
        await say({"step": "starting", "pid": successor.pid})
        try:
            await successor.expect("imported", IMPORT_TIMEOUT_S)
        except HandoverFailed as exc:
            await successor.kill()
            notify("READY=1\nSTATUS=serving")
            await say({"error": f"the new daemon did not start: {exc}; this one (pid {os.getpid()}) goes on"})
            return
        held = time.monotonic()
        await self._release(successor)
        released = time.monotonic()
        try:
            await successor.expect("serving", TAKEOVER_TIMEOUT_S)
        except HandoverFailed as exc:
            await successor.end(FAILED_SUCCESSOR_GRACE_S)  # it answers what it held first: never cut off unanswered
            await self._take_back()
            await say({"error": f"the new daemon failed while taking over: {exc}; this one (pid "
                                f"{os.getpid()}) serves again"})  # fmt: skip
            return
        self._gate.pass_to(self.listener.address)
        serving = time.monotonic()
        log.info("restart: requests held %.0f ms (this daemon let go in %.0f ms, the new one took over in %.0f ms)",
                 (serving - held) * 1000, (released - held) * 1000, (serving - released) * 1000)  # fmt: skip
        await say({"step": "serving", "pid": successor.pid})
        self._spawn(self._end_when_idle())

    async def _release(self, successor: Successor) -> None:
        """Stop accepting, hold new requests, let the short ones end, and leave the terminals, the timeline
        and the data dir's lock to `successor`."""
        assert self.app is not None and self.server is not None
        state = self.app.state
        self._spare = self.listener.sock.dup()  # to accept again should the new daemon fail
        self.server.stop_accepting()
        log.info("restart: this daemon (pid %d) stops accepting; the new one (pid %d) accepts", os.getpid(),
                 successor.pid)  # fmt: skip
        await self._gate.hold()
        if not await self._gate.settled(SETTLE_S):
            log.warning("restart: %d short requests still run; the terminals are let go anyway", self._gate.short)
        await state.compressor.stop()
        await state.terminals.release()
        state.timeline.forward(successor.forward_frame)
        self._control.stop()
        self.lock.release()
        self.released = True
        successor.channel.send(step="released")

    async def _take_back(self) -> None:
        """The new daemon failed after this one let go: take the data dir back and serve again."""
        assert self.app is not None and self.server is not None
        state = self.app.state
        await asyncio.to_thread(self.lock.acquire, LOCK_WAIT_S)
        self.released = False
        await asyncio.to_thread(state.timeline.open)  # it reads every stored frame: not on the loop
        state.terminals.take_back()
        state.compressor.start()
        await self._control.start()
        assert self._spare is not None
        self.listener = Listener.of(self._spare, self.listener.origin)
        await self.server.accept_again(self._spare)
        self._gate.resume()
        notify("READY=1\nSTATUS=serving")

    async def _end_when_idle(self) -> None:
        """End this daemon once nothing is in flight and no connection is open (idle ones close after
        uvicorn's keep-alive timeout), at the latest after LONGEST_DRAIN_S."""
        assert self.server is not None
        deadline = time.monotonic() + LONGEST_DRAIN_S
        while time.monotonic() < deadline:
            if not self._gate.busy and not self.server.server_state.connections:
                break
            await asyncio.sleep(EXIT_CHECK_S)
        self.server.should_exit = True

    # ----------------------------------------------------------------- stop

    def stopping(self) -> None:
        """SIGTERM or SIGINT: the waits in flight answer now (with their cursor), so the stop waits for nothing."""
        notify("STOPPING=1")
        if self.app is not None and not self.released:
            self.app.state.terminals.stop_waits()

    @property
    def _gate(self) -> HandoverGate:
        assert self.app is not None
        gate: HandoverGate = self.app.state.handover
        return gate

    def _spawn(self, work: Any) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _since_start_s() -> float | None:
    """Seconds since this process was started (its interpreter's start included), from /proc; None where that
    cannot be read."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])  # starttime, field 22
        return time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def run(settings: Settings, argv: Sequence[str], listener: Listener, lock: DataDirLock,
        predecessor: Predecessor | None) -> int:  # fmt: skip
    """Serve until stopped (or replaced); the exit status."""
    from lookout.core.gc_tuning import long_lived

    lowered = priority.lower() if predecessor is not None else None  # before its imports and its first thread
    with long_lived():  # the frameworks, the code and the app live as long as the daemon: frozen, never walked
        import uvicorn

        from lookout.api.header_timeout import header_deadline_protocol
        from lookout.core.redaction import redact_all_handlers
        from lookout.daemon.http_server import DaemonServer
        from lookout.server import create_app

        lifecycle = Lifecycle(settings, argv, listener, lock, predecessor)
        lifecycle.nice_to_take_back = lowered
        try:
            app = create_app(settings, lifecycle)
        except OSError as exc:  # UnsafePath among them: says what to fix
            print(f"lookout: refusing to start: {exc}", file=sys.stderr)
            return 2
    lifecycle.app = app
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = uvicorn.Config(
        app, access_log=False, log_level="info", ws_per_message_deflate=settings.ws_compression,
        http=header_deadline_protocol(settings.header_timeout_s, app.state.front_door),
    )  # fmt: skip
    server = DaemonServer(config, lifecycle.stopping)
    lifecycle.server = server
    redact_all_handlers(app.state.scrubber)  # after uvicorn set up its log
    server.run(sockets=[listener.sock])
    return 0 if server.started and not lifecycle.failed else 3  # as uvicorn.run: 3 when it never started
