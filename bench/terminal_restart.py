"""Terminal restart benchmark: how long a daemon killed with `kill -9` takes to have its busy terminals back.

`--sessions` terminals (default 100) each run a loop that prints a line every 20 ms. The daemon is killed
(`kill -9`, the daemon alone: the terminals' holders go on) and started again, `--runs` times; each run is
timed from the new process's start until

- `GET /v1/terminals` lists all of them `running` again (adopted: same pid, screen and blocks taken up);
- every one's screen has been answered (`GET /v1/terminals/{id}/screen`, one after the other).

Beside it, in the same run (once lookout's terminals have ended), tmux, whose server keeps its sessions across a
client's restart: a new client connecting to a server that holds the same busy sessions (the same program) lists
them (`tmux ls`), then captures every pane (`tmux capture-pane -p`, one client each, as a script would). And a bare start of the daemon on an empty
data dir (what any restart costs). The goal (issue 36): every screen within 1.5x of tmux's list-and-capture.

    .venv/bin/python bench/terminal_restart.py [--sessions 100] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from terminal_ingest import Daemon
from tmux_server import TmuxServer

os.environ.setdefault("PYENV_REHASH_TIMEOUT", "1")
"""Both lookout's shells and tmux's source the user's ~/.bashrc; on a machine where it runs `pyenv rehash`, a shell
killed in the middle of one leaves its lock behind, and every later shell would wait 60 s for it."""

BUSY = "while :; do echo busy $RANDOM; read -t 0.02 _; done"
"""A line every 20 ms, without a process per line (a `sleep` per line would be 5,000 forks a second for 100)."""
BUSY_ARGV = ["bash", "-c", BUSY]
"""The same program on both sides, named: `sh` is dash on Debian, which has no `read -t`, so a tmux pane that ran
`sh -c BUSY` printed as fast as it could (the figures before this named it so measured tmux beside floods)."""
GOAL_RATIO = 1.5


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def restart(daemon: Daemon, ids: list[str]) -> tuple[float, float]:
    """Seconds from a new daemon process until all terminals are listed running, and until every screen was
    answered."""
    assert daemon.proc is not None
    daemon.proc.kill()
    daemon.proc.wait()
    start = time.perf_counter()
    daemon.start()
    with daemon.client(timeout=120) as api:
        while True:
            listed = api.get("/v1/terminals").json()["terminals"]
            if sum(t["status"] == "running" for t in listed) >= len(ids):
                running = time.perf_counter() - start
                break
            if any(t["status"] == "lost" for t in listed):
                raise RuntimeError(f"a terminal was lost: {[t for t in listed if t['status'] == 'lost']}")
            time.sleep(0.01)
        for tid in ids:
            api.get(f"/v1/terminals/{tid}/screen").raise_for_status()
        return running, time.perf_counter() - start


def bare_start(workdir: Path) -> float:
    daemon = Daemon(workdir)
    start = time.perf_counter()
    daemon.start()
    seconds = time.perf_counter() - start
    daemon.stop()
    return seconds


def tmux_list_and_capture(sessions: int, runs: int) -> tuple[list[float], list[float]]:
    """Seconds a new client takes to list the sessions, and to list them and capture every pane."""
    with TmuxServer("bench-restart") as tmux:
        for i in range(sessions):
            tmux("new-session", "-d", "-s", f"s{i}", "-x", "80", "-y", "24", *BUSY_ARGV)
        time.sleep(1)
        lists, captures = [], []
        for _ in range(runs):
            start = time.perf_counter()
            listed = tmux("ls")
            lists.append(time.perf_counter() - start)
            if listed.count("\n") != sessions:
                raise RuntimeError(f"tmux lists {listed.count(chr(10))} sessions, not {sessions}")
            for i in range(sessions):
                tmux("capture-pane", "-p", "-t", f"s{i}")
            captures.append(time.perf_counter() - start)
        return lists, captures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-restart-"))
        stack.callback(shutil.rmtree, workdir, True)
        daemon = Daemon(workdir / "busy", env={"LOOKOUT_MAX_SESSIONS": str(args.sessions + 10)})
        (workdir / "busy").mkdir()
        stack.callback(daemon.stop)
        daemon.start()
        _progress(f"starting {args.sessions} busy terminals ...")
        with daemon.client() as api:
            ids = [api.post("/v1/terminals", json={"command": BUSY_ARGV, "cols": 80, "rows": 24}).json()["id"]
                   for _ in range(args.sessions)]  # fmt: skip
        time.sleep(2)
        runnings, screens, bares = [], [], []
        for run in range(1, args.runs + 1):
            running, screened = restart(daemon, ids)
            runnings.append(running)
            screens.append(screened)
            empty = workdir / f"empty-{run}"
            empty.mkdir()
            bares.append(bare_start(empty))
            _progress(f"run {run}/{args.runs}: all running {running:.2f} s, every screen {screened:.2f} s, "
                      f"bare start {bares[-1]:.2f} s")  # fmt: skip
    _progress("tmux (lookout's terminals ended) ...")
    lists, captures = tmux_list_and_capture(args.sessions, args.runs)
    running, screened, bare = statistics.median(runnings), statistics.median(screens), statistics.median(bares)
    ls, capture = statistics.median(lists), statistics.median(captures)
    ratio = screened / capture
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"\nterminal_restart: {args.sessions} busy terminals, kill -9 of the daemon, median of {args.runs} runs\n")
    print(f"{'what':<58} {'seconds':>8}")
    print(f"{'lookout: new daemon until all are listed running':<58} {running:8.3f}")
    print(f"{'lookout: new daemon until every screen was answered':<58} {screened:8.3f}")
    print(f"{'lookout: a bare start (empty data dir)':<58} {bare:8.3f}")
    print(f"{version + ': a new client lists them (tmux ls)':<58} {ls:8.3f}")
    print(f"{version + ': a new client lists them and captures every pane':<58} {capture:8.3f}")
    verdict = "PASS" if ratio <= GOAL_RATIO else "MISS"
    print(f"\ngoal: every screen within {GOAL_RATIO}x of tmux's list and capture: {ratio:.2f}x ..... {verdict}")
    figures = {
        "bench": "terminal_restart",
        "sessions": args.sessions,
        "runs": args.runs,
        "restart_to_running_s": round(running, 3),
        "restart_to_every_screen_s": round(screened, 3),
        "bare_start_s": round(bare, 3),
        "tmux_ls_s": round(ls, 4),
        "tmux_ls_and_capture_s": round(capture, 3),
        "screens_vs_tmux": round(ratio, 2),
        "goal_screens_within_1_5x_tmux": ratio <= GOAL_RATIO,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
