"""A terminal's screen at any moment (issue: see what the agent saw): real programs (vim editing a file, top,
a build that draws progress bars in colour) are driven while their screen is read live at 20 moments; after
the run `screen?at=<that moment's raw offset>` gives the same screen, cell for cell (text, cursor, colours,
styles), with both engines, before and after a restart of the daemon (kill -9)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Daemon
from tests.support.polling import eventually

LAYERS = "text,cursor,fgColors,bgColors,styles"
COMPARED = ("terminal", "cursor", "text", "fgColors", "bgColors", "styles", "colorPalette", "styleLegend")
BUILD = r"""
import sys
for stage in range(5):
    sys.stdin.readline()
    for pct in range(0, 101, 20):
        bar = "#" * (pct // 5) + " " * (20 - pct // 5)
        sys.stdout.write(f"\r\x1b[1;34mstage {stage}\x1b[0m [\x1b[32m{bar}\x1b[0m] {pct:3d}%")
        sys.stdout.flush()
    sys.stdout.write(f"\n\x1b[33mwarning:\x1b[0m stage {stage} done\n")
    sys.stdout.flush()
print("\x1b[1;32mbuild ok\x1b[0m")
"""


def _quiet(api: httpx.Client, tid: str, ms: int = 250) -> None:
    r = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"stable_ms": ms}, "timeout_ms": 20_000})
    assert r.status_code == 200, r.text


def _live(api: httpx.Client, tid: str) -> dict[str, Any]:
    screen = api.get(f"/v1/terminals/{tid}/screen", params={"layers": LAYERS}).json()
    return {"offset": screen["raw_offset"], **{k: screen.get(k) for k in COMPARED}}


def _next(api: httpx.Client, tid: str, seen: list[tuple[str, dict[str, Any]]], ms: int = 250) -> None:
    """Read the screen once the program has written more since this terminal's last reading, and is quiet."""
    before = next((s["offset"] for t, s in reversed(seen) if t == tid), -1)
    eventually(lambda: api.get(f"/v1/terminals/{tid}").json()["raw_size"] > before, what=f"{tid} to write more")
    _quiet(api, tid, ms)
    live = _live(api, tid)
    assert live["offset"] > before, (tid, live["offset"], before)
    seen.append((tid, live))


def _past(api: httpx.Client, tid: str, offset: int) -> dict[str, Any]:
    r = api.get(f"/v1/terminals/{tid}/screen", params={"layers": LAYERS, "at": offset})
    assert r.status_code == 200, r.text
    screen = r.json()
    assert screen["at"]["raw_offset"] == offset and screen["state"] is None
    return {"offset": offset, **{k: screen.get(k) for k in COMPARED}}


def _record(api: httpx.Client, tmp_path: Path) -> list[tuple[str, dict[str, Any]]]:
    """20 live screens of three real programs, each with its terminal id."""
    seen: list[tuple[str, dict[str, Any]]] = []
    target = tmp_path / "notes.txt"
    target.write_text("first line\nsecond line\n")
    vim = api.post("/v1/terminals", json={"command": ["vim", "-u", "NONE", "-N", "-i", "NONE", str(target)],
                                          "cols": 80, "rows": 20}).json()["id"]  # fmt: skip
    _quiet(api, vim)
    for keys in ("Gotyped in vim", "\x1b:set number\r", "ggdd", "Oa new top line\x1b", "/second\r", "x", "u",
                 ":%s/line/LINE/g\r"):  # fmt: skip
        api.post(f"/v1/terminals/{vim}/input", json={"text": keys})
        _next(api, vim, seen)
    top = api.post("/v1/terminals", json={"command": ["top", "-d", "0.5"], "cols": 100, "rows": 24}).json()["id"]
    for _ in range(7):
        _next(api, top, seen, 150)
    build = api.post("/v1/terminals", json={"command": ["python3", "-c", BUILD], "cols": 60, "rows": 12}).json()["id"]
    for _ in range(5):  # each Enter runs a stage; the fifth ends the build
        api.post(f"/v1/terminals/{build}/input", json={"keys": ["Enter"]})
        _next(api, build, seen)
    return seen


@pytest.mark.parametrize("engine", ["avt", "pyte"])
def test_the_screen_at_20_moments_equals_what_was_read_live(tmp_path: Path, engine: str) -> None:
    d = Daemon(tmp_path / "data", LOOKOUT_SCREEN_ENGINE=engine).start()
    try:
        with d.client(timeout=60) as api:
            seen = _record(api, tmp_path)
            assert len(seen) == 20 and len({(t, s["offset"]) for t, s in seen}) == 20, "20 different moments"
            for tid, live in seen:
                assert _past(api, tid, live["offset"]) == live, f"{tid} at {live['offset']}"
        d.stop(signal.SIGKILL)
        d.start()
        with d.client(timeout=60) as api:
            for tid, live in seen:
                assert _past(api, tid, live["offset"]) == live, f"after the restart: {tid} at {live['offset']}"
    finally:
        d.finish()
