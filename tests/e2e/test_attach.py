"""`lookout attach` driven through a real PTY (ptyprocess), against the daemon as a subprocess: it draws the
screen at once, types into the program, leaves with the detach key while the program goes on, watches
without typing (`--read-only`), takes the PTY over only when asked (`--resize`, recorded as its doing), and
restores the person's terminal however it ends."""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Callable

import httpx
from ptyprocess import PtyProcess

from lookout.terminal.screen.engines import create_engine
from tests.conftest import REPO, Daemon
from tests.support.polling import eventually

LEAVE = b"\x1b[?1049l"


def _shell(api: httpx.Client) -> str:
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()["id"]
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo before-attach\r"}, "until": {"regex": "^before-attach"}})
    return tid


def _attach(daemon: Daemon, tid: str, *extra: str, cols: int = 100, rows: int = 30) -> PtyProcess:
    argv = [sys.executable, "-m", "lookout", "attach", tid, "--url", daemon.url, "--token", daemon.token, *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
    return PtyProcess.spawn(argv, cwd=str(REPO), env=env, dimensions=(rows, cols))


class Screen:
    """What the attach process wrote to its terminal so far."""

    def __init__(self, proc: PtyProcess) -> None:
        self.proc = proc
        self.seen = b""

    def until(self, needle: bytes, timeout: float = 20) -> bytes:
        deadline = time.monotonic() + timeout
        while needle not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{needle!r} not shown; the attach wrote {self.seen[-600:]!r}"
            if select.select([self.proc.fd], [], [], min(left, 0.2))[0]:
                try:
                    self.seen += os.read(self.proc.fd, 65536)
                except OSError:  # it has exited
                    assert needle in self.seen, f"{needle!r} not shown before the exit: {self.seen[-600:]!r}"
        return self.seen

    def exit_status(self, timeout: float = 20) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.isalive():
            assert time.monotonic() < deadline, "the attach did not end"
            if select.select([self.proc.fd], [], [], 0.1)[0]:
                try:
                    self.seen += os.read(self.proc.fd, 65536)
                except OSError:
                    break
        while select.select([self.proc.fd], [], [], 0.2)[0]:  # what it wrote last, on its way out
            try:
                chunk = os.read(self.proc.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk
        self.proc.wait()
        return int(self.proc.exitstatus if self.proc.exitstatus is not None else -1)


def _screen_text(api: httpx.Client, tid: str) -> str:
    return "\n".join(api.get(f"/v1/terminals/{tid}/screen").json()["text"])


def test_attach_draws_types_detaches_and_the_program_goes_on(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    screen = Screen(_attach(daemon, tid))
    screen.until(b"before-attach")  # drawn at once, from the hydration
    screen.proc.write(b"echo typed-$((2*21))\r")
    screen.until(b"typed-42")
    eventually(lambda: "typed-42" in _screen_text(api, tid), what="the program to get the keys")
    screen.proc.write(b"\x1c")  # C-\
    assert screen.exit_status() == 0
    assert LEAVE in screen.seen and b"detached" in screen.seen, screen.seen[-300:]
    info = api.get(f"/v1/terminals/{tid}").json()
    assert info["status"] == "running" and (info["cols"], info["rows"]) == (80, 24), "watching never resizes"
    frames = api.get("/v1/timeline/frames", params={"resource": f"terminal:{tid}"}).json()["frames"]
    assert any(f["agent"] == "attach" and f["category"] == "terminal input" for f in frames)


def test_read_only_sends_nothing_and_resize_takes_over(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    watcher = Screen(_attach(daemon, tid, "--read-only", cols=60, rows=20))
    watcher.until(b"before-attach")
    watcher.proc.write(b"echo not-sent\r")
    watcher.proc.write(b"\x1c")
    assert watcher.exit_status() == 0
    after = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo after-$((6*7))\r"},
                                                        "until": {"regex": "^after-42"}})  # fmt: skip
    assert after.json()["ended"] == "regex", after.text  # what the watcher had sent would have come before
    assert "not-sent" not in _screen_text(api, tid)

    taker = Screen(_attach(daemon, tid, "--resize", "--detach-key", "C-a", cols=100, rows=30))
    taker.until(b"before-attach")
    eventually(lambda: (t := api.get(f"/v1/terminals/{tid}").json())["cols"] == 100 and t["rows"] == 30,
               what="the take-over to resize the PTY")  # fmt: skip
    taker.proc.write(b"\x01")
    assert taker.exit_status() == 0
    frames = api.get("/v1/timeline/frames", params={"resource": f"terminal:{tid}", "text": "true"}).json()["frames"]
    resizes = [f for f in frames if f["category"] == "terminal resize"]
    assert [f["agent"] for f in resizes] == ["attach"], "the timeline says who changed the agent's screen"


def test_the_terminal_is_restored_when_the_daemon_drops_the_connection(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    screen = Screen(_attach(daemon, tid))
    screen.until(b"before-attach")
    daemon.stop()
    assert screen.exit_status() == 1
    assert LEAVE in screen.seen and b"closed the connection" in screen.seen


def _person(seen: bytes, cols: int, rows: int) -> list[str]:
    """What the person's window shows: what the attach wrote, played on a screen of the window's size."""
    window = create_engine("avt", cols, rows, 0)
    window.feed(seen)
    return window.text_rows()


def _showing(screen: Screen, wanted: Callable[[list[str]], bool], what: str, timeout: float = 30) -> list[str]:
    deadline = time.monotonic() + timeout
    while not wanted(rows := _person(screen.seen, 80, 24)):
        assert time.monotonic() < deadline, f"{what} not shown; the window shows:\n" + "\n".join(rows)
        if select.select([screen.proc.fd], [], [], 0.2)[0]:
            screen.seen += os.read(screen.proc.fd, 65536)
    return rows


def test_a_smaller_window_follows_the_cursor_and_says_it_is_clipped(daemon: Daemon, api: httpx.Client) -> None:
    """80x24 on a 120x40 terminal that printed 300,000 lines: the window shows the rows above the prompt, the
    prompt and what is typed (the part of the screen that holds the cursor, as tmux pans a smaller client), and
    a status line that says the view is clipped, the terminal's real size and its name (names with control
    characters are refused when set, and the status line escapes them anyway: tests/unit/test_attach_painter.py)."""
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 120, "rows": 40, "name": "flood"}).json()["id"]
    done = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "seq 1 300000\r"},
                                                       "until": {"block_end": True}, "timeout_ms": 300_000}, timeout=330)
    assert done.json()["ended"] == "block_end", done.text
    shown = api.get(f"/v1/terminals/{tid}/screen").json()
    prompt = shown["text"][shown["cursor"]["top"]].strip()
    assert shown["cursor"]["top"] >= 24 and prompt, "the prompt is below the rows a window of 24 shows from the top"

    screen = Screen(_attach(daemon, tid, cols=80, rows=24))
    rows = _showing(screen, lambda rows: any(prompt in row for row in rows[:23]), "the prompt")
    assert "300000" in rows, "the last lines of output are above it"
    status = rows[23]
    assert "clipped" in status and "120x40" in status and '"flood"' in status, status
    screen.proc.write(b"echo typed-$((6*7))")
    rows = _showing(screen, lambda rows: any(row.endswith("echo typed-$((6*7))") for row in rows[:23]), "the typed text")
    screen.proc.write(b"\r")
    _showing(screen, lambda rows: "typed-42" in rows, "the output of the typed command")
    screen.proc.write(b"\x1c")
    assert screen.exit_status() == 0
    assert api.get(f"/v1/terminals/{tid}").json()["cols"] == 120, "watching never resizes"


def test_a_held_terminal_shows_the_lease_and_takes_keys_only_with_take_over(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 600}, headers={"X-Lookout-Agent": "agent-A"}).raise_for_status()
    refused = Screen(_attach(daemon, tid, cols=100, rows=30))
    refused.until(b"held by 'agent-A' until ")  # shown before anything is typed
    refused.until(b"keys refused (--take-over types)")
    refused.proc.write(b"echo refused-$((3*3))\r")
    refused.until(b"keys refused: held by 'agent-A' until ")  # the daemon's refusal, shown; still attached
    assert refused.proc.isalive()
    refused.proc.write(b"\x1c")
    assert refused.exit_status() == 0 and "refused-9" not in _screen_text(api, tid)

    taker = Screen(_attach(daemon, tid, "--take-over", cols=100, rows=30))
    taker.until(b"your keys go in anyway")
    taker.proc.write(b"echo taken-$((4*4))\r")
    eventually(lambda: "taken-16" in _screen_text(api, tid), what="the keys of a person who took over")
    taker.proc.write(b"\x1c")
    assert taker.exit_status() == 0
    assert api.get(f"/v1/terminals/{tid}").json()["lease"]["taken_over_by"] == ["attach"]
