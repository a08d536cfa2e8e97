"""History restart benchmark: what a terminal's past commands cost a restart. A daemon takes up each terminal's
inputs and blocks when it adopts it (whose each command was: lookout.core.hands), on its event loop.

Two daemons, each with one bash terminal (lookout's shell integration on): one whose shell has run `--commands`
commands (default 2,000, each sent as one input, as an agent sends them), one that has run none. Each daemon is
killed (`kill -9`; the terminals' holders go on) and started again, `--runs` times; each run is timed from the new
process's start until its terminal is listed running and its screen is answered (terminal_restart's `restart`).
Beside them, in the same run, tmux: a new client's `capture-pane -p` of a pane whose bash ran as many commands.
The goal: a terminal's history does not show in the time its screen is back (within 1.2x of the one with none).

    .venv/bin/python bench/history_restart.py [--commands 2000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from terminal_ingest import Daemon
from terminal_restart import restart
from tmux_server import TmuxServer

GOAL_RATIO = 1.2


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def with_history(daemon: Daemon, commands: int) -> str:
    """A bash terminal that has run `commands` commands, each sent as one input; its id."""
    with daemon.client(timeout=60) as api:
        tid = api.post("/v1/terminals", json={"command": ["bash"], "cols": 80, "rows": 24}).json()["id"]
        for _ in range(commands):
            api.post(f"/v1/terminals/{tid}/input", json={"text": "true", "keys": ["Enter"]}).raise_for_status()
        deadline = time.monotonic() + 300
        while api.get(f"/v1/terminals/{tid}").json()["block_count"] < commands:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the shell did not run {commands} commands within 300 s")
            time.sleep(0.1)
    return tid


def tmux_capture(commands: int, runs: int) -> float:
    """The median seconds of a new client's capture of a pane whose bash ran `commands` commands."""
    with TmuxServer("bench-history") as tmux:
        tmux("new-session", "-d", "-s", "h", "-x", "80", "-y", "24", "bash")
        for sent in range(0, commands, 100):  # as many commands, typed (a hundred a client: its message is bounded)
            tmux("send-keys", "-t", "h", *["true", "Enter"] * min(100, commands - sent))
        time.sleep(2)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            tmux("capture-pane", "-p", "-t", "h")
            times.append(time.perf_counter() - start)
        return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"history": [], "none": []}
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-history-"))
        stack.callback(shutil.rmtree, workdir, True)
        daemons, ids = {}, {}
        for kind, commands in (("history", args.commands), ("none", 0)):
            (workdir / kind).mkdir()
            daemons[kind] = Daemon(workdir / kind)
            stack.callback(daemons[kind].stop)
            daemons[kind].start()
            _progress(f"a terminal that has run {commands} commands ...")
            ids[kind] = with_history(daemons[kind], commands)
        for run in range(1, args.runs + 1):
            for kind in ("history", "none") if run % 2 else ("none", "history"):
                times[kind].append(restart(daemons[kind], [ids[kind]])[1])
            _progress(f"run {run}/{args.runs}: screen back {times['history'][-1]:.3f} s with {args.commands} "
                      f"commands, {times['none'][-1]:.3f} s with none")  # fmt: skip
    tmux_s = tmux_capture(args.commands, args.runs)
    history, none = statistics.median(times["history"]), statistics.median(times["none"])
    ratio = history / none
    print(f"\nhistory_restart: kill -9 and a new daemon, median of {args.runs} runs\n")
    print(f"{'what':<66} {'s':>8}")
    print(f"{f'lookout: screen back, a terminal that ran {args.commands} commands':<66} {history:8.3f}")
    print(f"{'lookout: screen back, a terminal that ran none':<66} {none:8.3f}")
    print(f"{f'tmux: capture-pane of a pane that ran {args.commands} commands':<66} {tmux_s:8.3f}")
    verdict = "PASS" if ratio <= GOAL_RATIO else "MISS"
    print(f"\ngoal: history within {GOAL_RATIO}x of none: {ratio:.2f}x ..... {verdict}")
    print(json.dumps({"bench": "history_restart", "commands": args.commands, "runs": args.runs,
                      "screen_back_history_s": round(history, 3), "screen_back_none_s": round(none, 3),
                      "tmux_capture_s": round(tmux_s, 4), "history_vs_none": round(ratio, 2),
                      "goal_within_1_2x": ratio <= GOAL_RATIO}))  # fmt: skip


if __name__ == "__main__":
    main()
