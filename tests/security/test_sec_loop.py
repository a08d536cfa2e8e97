"""Issue 16, big answers: a deltas page is bounded in bytes and pages on; a huge layered screen is built off
the event loop, so /healthz answers while several render."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from lookout.api.streams import MAX_DELTAS_BYTES
from lookout.terminal.journal.deltas import DeltaLog
from tests.conftest import Daemon
from tests.support.terminals import delta

ALL_LAYERS = "text,cursor,fgColors,bgColors,styles,bold,italic,underline"
PROBE = (
    "import sys, time, urllib.request\n"
    "while True:\n"
    "    urllib.request.urlopen(sys.argv[1] + '/healthz', timeout=300).read()\n"
    "    print(time.monotonic(), flush=True)\n"
)
"""Asks for /healthz again and again, saying when each was answered: from a process of its own, so that what the
test's process does meanwhile (receiving the big screens in three threads) never slows the asking."""
COLOURED = (
    "import sys, time\n"
    "row = ''.join(f'\\x1b[3{i % 8};4{(i + 3) % 8}{\";1\" if i % 3 else \"\"}m' + 'x' * 9 for i in range(99))\n"
    "for n in range(400):\n"
    "    sys.stdout.write(row + f'\\x1b[0m{n}\\r\\n')\n"
    "sys.stdout.write('all-printed\\r\\n'); sys.stdout.flush(); time.sleep(600)\n"
)


def test_a_deltas_page_stops_at_its_byte_budget_and_pages_on(tmp_path: Path) -> None:
    log = DeltaLog(tmp_path)
    for i in range(10):
        log.append(delta([(row, f"{i}" * 1000) for row in range(300)], cols=1000, rows=500))
    cursor, seen, sizes = 0, 0, []
    while cursor < log.size():
        page = log.read(cursor, 1000, max_bytes=1 << 20)
        sizes.append(page.resume_cursor - cursor)
        seen += len(page.deltas)
        cursor = page.resume_cursor
    assert seen == 10 and len(sizes) > 1 and max(sizes) <= 1 << 20
    alone = log.read(0, 1000, max_bytes=10)
    assert len(alone.deltas) == 1, "a delta larger than the budget still comes, alone, so paging goes on"
    log.close()


@pytest.mark.parametrize("engine", ["avt", "pyte"])
def test_big_renders_and_deltas_do_not_hold_the_loop(tmp_path: Path, engine: str) -> None:
    """Before: a 1000x500 screen of 3,000 coloured lines with every layer held every client 6.6 s (three at
    once 16 s), and /deltas?limit=1000 was 79 MB. Here 400 coloured lines: the view is still 500,000 cells.
    Both engines: the copy of the screen is taken in a worker too (pyte's takes hundreds of ms)."""
    daemon = Daemon(tmp_path / "data", LOOKOUT_SCREEN_ENGINE=engine).start()
    try:
        _big_renders(daemon)
    finally:
        daemon.stop()


def _big_renders(daemon: Daemon) -> None:
    with daemon.client(timeout=300) as api:
        create = {"command": [sys.executable, "-c", COLOURED], "cols": 1000, "rows": 500}
        tid = api.post("/v1/terminals", json=create).json()["id"]
        until = {"until": {"regex": "^all-printed"}, "since": 0, "timeout_ms": 120000}
        assert api.post(f"/v1/terminals/{tid}/wait", json=until).json()["matched"]

        cursor, size = 0, None
        while size is None or cursor < size:
            page = api.get(f"/v1/terminals/{tid}/deltas", params={"cursor": cursor, "limit": 1000})
            body = page.json()
            assert len(page.content) < 2 * MAX_DELTAS_BYTES or len(body["deltas"]) == 1
            cursor, size = body["resume_cursor"], body["file_size"]

        renders: list[float] = []
        screens: list[httpx.Response] = []

        def render() -> None:
            try:
                with daemon.client(timeout=300) as client:
                    params = {"layers": ALL_LAYERS, "encoding": "cells", "scrollback": 2000}
                    screens.append(client.get(f"/v1/terminals/{tid}/screen", params=params))
            finally:
                renders.append(time.monotonic())

        threads = [threading.Thread(target=render) for _ in range(3)]
        probe = subprocess.Popen([sys.executable, "-c", PROBE, daemon.url], stdout=subprocess.PIPE, text=True)
        try:
            assert probe.stdout is not None and probe.stdout.readline(), "the probe asks"
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            probe.kill()
        health = [t for t in map(float, probe.communicate()[0].split()) if t > started]
    assert [screen.status_code for screen in screens] == [200] * 3
    assert [len(screen.json()["fgColors"]) for screen in screens] == [400] * 3, "the 400 coloured rows"
    answered_during = [t for t in health if t < min(renders)]
    assert len(answered_during) >= 3, "/healthz kept answering while the first big screen rendered"
