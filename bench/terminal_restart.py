"""Terminal restart benchmark: how long a daemon killed with `kill -9` takes to have its busy terminals back.

50 terminals each run a loop that prints a line every 20 ms. The daemon is killed (`kill -9`, the daemon
alone: the terminals' holders go on) and started again, `--runs` times; each run is timed from the new
process's start until `GET /v1/terminals` lists all 50 as `running` again (adopted: same pid, screen and
blocks taken up). Beside it, in the same run:

- a bare start: the same daemon on an empty data dir, until `/healthz` answers (what any restart costs);
- adoption: the difference, what the 50 terminals add to a restart (the goal: under 1 s);
- tmux, the peer whose server keeps its sessions across a client's restart: a new client connecting to a
  server that holds the same 50 busy sessions and listing them (`tmux ls`).

Run it from the repository root after `make test` (or `make bench`):

    .venv/bin/python bench/terminal_restart.py [--sessions 50] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
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

BUSY = "while :; do echo busy $RANDOM; read -t 0.02 _; done"
"""A line every 20 ms, without a process per line (a `sleep` per line would be 2,500 forks a second for 50)."""
GOAL_ADOPTION_S = 1.0


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def restart_to_running(daemon: Daemon, sessions: int) -> float:
    """Seconds from a new daemon process until all `sessions` terminals are listed running."""
    assert daemon.proc is not None
    daemon.proc.kill()
    daemon.proc.wait()
    start = time.perf_counter()
    daemon.start()
    with daemon.client() as api:
        while True:
            listed = api.get("/v1/terminals").json()["terminals"]
            if sum(t["status"] == "running" for t in listed) >= sessions:
                return time.perf_counter() - start
            if any(t["status"] == "lost" for t in listed):
                raise RuntimeError(f"a terminal was lost: {[t for t in listed if t['status'] == 'lost']}")
            time.sleep(0.01)


def bare_start(workdir: Path) -> float:
    daemon = Daemon(workdir)
    start = time.perf_counter()
    daemon.start()
    seconds = time.perf_counter() - start
    daemon.stop()
    return seconds


def tmux_list(sessions: int, runs: int) -> list[float]:
    with TmuxServer("bench-restart") as tmux:
        for i in range(sessions):
            tmux("new-session", "-d", "-s", f"s{i}", "-x", "80", "-y", "24", "sh", "-c", BUSY)
        time.sleep(1)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            listed = tmux("ls")
            times.append(time.perf_counter() - start)
            if listed.count("\n") != sessions:
                raise RuntimeError(f"tmux lists {listed.count(chr(10))} sessions, not {sessions}")
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-restart-"))
        stack.callback(shutil.rmtree, workdir, True)
        daemon = Daemon(workdir / "busy")
        (workdir / "busy").mkdir()
        stack.callback(daemon.stop)
        daemon.start()
        _progress(f"starting {args.sessions} busy terminals ...")
        with daemon.client() as api:
            for _ in range(args.sessions):
                api.post("/v1/terminals", json={"command": BUSY, "cols": 80, "rows": 24}).raise_for_status()
        time.sleep(1)
        restarts, bares = [], []
        for run in range(1, args.runs + 1):
            restarts.append(restart_to_running(daemon, args.sessions))
            empty = workdir / f"empty-{run}"
            empty.mkdir()
            bares.append(bare_start(empty))
            _progress(f"run {run}/{args.runs}: restart to running {restarts[-1]:.2f} s, bare start {bares[-1]:.2f} s")
        _progress("tmux ...")
        tmux = tmux_list(args.sessions, args.runs)
    restart, bare, ls = statistics.median(restarts), statistics.median(bares), statistics.median(tmux)
    adoption = max(0.0, restart - bare)
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"\nterminal_restart: {args.sessions} busy terminals, kill -9 of the daemon, median of {args.runs} runs\n")
    print(f"{'what':<44} {'seconds':>8}")
    print(f"{'lookout: new daemon until all are running':<44} {restart:8.3f}")
    print(f"{'lookout: a bare start (empty data dir)':<44} {bare:8.3f}")
    print(f"{'lookout: adoption (the difference)':<44} {adoption:8.3f}")
    print(f"{version + ': a new client lists them (tmux ls)':<44} {ls:8.3f}")
    verdict = "PASS" if adoption < GOAL_ADOPTION_S else "MISS"
    print(f"\ngoal: adoption of {args.sessions} busy terminals < {GOAL_ADOPTION_S:.0f} s ..... {verdict}")
    figures = {
        "bench": "terminal_restart",
        "sessions": args.sessions,
        "runs": args.runs,
        "restart_to_running_s": round(restart, 3),
        "bare_start_s": round(bare, 3),
        "adoption_s": round(adoption, 3),
        "tmux_ls_s": round(ls, 4),
        "goal_adoption_lt_1s": adoption < GOAL_ADOPTION_S,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
