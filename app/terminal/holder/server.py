"""The fork server: one process per daemon that has imported the holder's code once and forks a holder for
each new terminal (Python's forkserver idea, applied to holders). A holder then costs what its own pages
cost (its interpreter's are shared with every holder forked from the same server) and starts in a few
milliseconds instead of an interpreter's start.

It reads specs, one JSON object a line, on stdin; for each it forks a child that starts a new session and
forks the holder (so the holder is nobody's child: init or the nearest subreaper reaps it), then ends. The
holder writes its `started` answer (with the spec's id) on stdout itself; answers may come in any order.
The server ends when stdin closes (the daemon has gone); its holders go on.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal

from app.terminal.holder import journal, loop, protocol
from app.terminal.holder.pty import close_all_but

MAX_SPEC = 1 << 20


def serve(requests: int = 0, answers: int = 1) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    close_all_but({0, 1, 2})  # what the daemon's event loop let us inherit is no holder's business
    _warm_up()
    gc.collect()
    gc.freeze()  # what is loaded now is never scanned again: a holder's collections leave those pages shared
    pending = b""
    while chunk := os.read(requests, 65536):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            _start(line, answers)
        if len(pending) > MAX_SPEC:
            os.write(answers, protocol.encode("started", id=None, error="a spec longer than the server takes"))
            pending = b""


def _warm_up() -> None:
    """Run once here what every holder runs first (the encoders, the selector), so that what this makes and
    caches is made once, in pages the holders share, instead of in each holder's own."""
    protocol.decode(protocol.encode("hello", version=protocol.VERSION, failure=None, started_at=0.0))
    protocol.encode("out", size=0)
    journal.format_record([0.0, "r", 0, "80x24"])
    journal.format_record([0.0, "o", 0, 1])
    selectors.DefaultSelector().close()


def _start(line: bytes, answers: int) -> None:
    try:
        spec = json.loads(line)
        if not isinstance(spec, dict):
            raise ValueError("a spec is a JSON object")
    except (ValueError, RecursionError) as exc:
        os.write(answers, protocol.encode("started", id=None, error=f"not a spec: {exc}"))
        return
    try:
        pid = os.fork()
    except OSError as exc:
        os.write(answers, protocol.encode("started", id=spec.get("id"), error=exc.strerror, errno=exc.errno))
        return
    if pid == 0:
        try:
            os.setsid()
            if os.fork():
                os._exit(0)
            loop.run(spec, answers)
            os._exit(0)
        except BaseException as exc:  # noqa: BLE001 (a forked child never returns into the server's loop)
            try:
                os.write(answers, protocol.encode("started", id=spec.get("id"), error=f"the holder failed: {exc!r}"))
            finally:
                os._exit(1)
    os.waitpid(pid, 0)
