"""Restart-under-load benchmark: what clients see while `lookout restart` replaces the daemon, beside the same
clients on a quiet daemon (never restarted) run at the same time in the same invocation.

Two daemons serve side by side, the same load on each at the same moments (so the machine's own stalls fall on
both); in each of `--restarts` rounds (default 3) the second is hot restarted once (`lookout restart`):

- every 10 ms a new connection to each daemon for `GET /healthz`, and another for `GET /v1/terminals/{id}`
  (which needs the terminal the new daemon adopts);
- the official MCP SDK client, over Streamable HTTP, calls `terminal_list` every 100 ms through one session
  on each daemon;
- 20 clients on each daemon send an input and hold a wait open (`POST /act`, until a line their terminal
  prints 4 s later; 60 s timeout), begun 0.5 s before the restart.

Then a clean stop (SIGTERM to the daemon that serves) while 20 clients each hold a wait of 300 s on it: how long
until the daemon is gone, and how many waits got the resumable answer (reason `stopping`, with a cursor).

The whole is run once on the machine as it is and once with 4 processes spinning on the CPU (`--busy`: a loaded
machine, the same for both daemons). Figures: for each kind of request, the median and worst latency on each
daemon, and the worst added latency (the most a request sent during a restart took on the restarted daemon longer
than the same request sent to the quiet one at the same moment), and beside it the same worst outside the restarts
(the pairing's own noise on this machine); connections refused or failed, inputs refused, waits answered wrongly, MCP calls failed,
how long `lookout restart` took. The goals (issue 47): 0 refused, no connection waits more than 300 ms longer than on the
quiet daemon.

    .venv/bin/python bench/restart_load.py [--restarts 3] [--busy 0,4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from terminal_ingest import REPO, TOKEN, Daemon

from lookout.daemon.lock import lock_holder
from tests.support.in_flight import InFlight
from tests.support.mcp_client import call, over_http

WAITERS = 20
GOAL_ADDED_WORST_S = 0.3
AUTH = {"Authorization": f"Bearer {TOKEN}"}
KINDS = ("GET /healthz", "GET /v1/terminals/{id}", "MCP terminal_list")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Knocker(threading.Thread):
    """`GET path` on a new connection every 10 ms to each daemon at once (the quiet one and the restarted one, a
    thread each) until stopped: (when it began, seconds on each, None where it failed) of each knock, and what
    failed on each (refused, reset, or not a 200)."""

    def __init__(self, targets: tuple[str, str]) -> None:
        super().__init__(daemon=True)
        self.targets = targets
        self.done = threading.Event()
        self.failures: tuple[list[str], list[str]] = ([], [])
        self.knocks: list[tuple[float, float | None, float | None]] = []

    def _one(self, side: int) -> float | None:
        began = time.monotonic()
        try:
            answer = httpx.get(self.targets[side], headers=AUTH, timeout=120)
            if answer.status_code == 200:
                return time.monotonic() - began
            self.failures[side].append(f"{answer.status_code} {answer.text[:200]}")
        except httpx.HTTPError as exc:
            self.failures[side].append(repr(exc))
        return None

    def run(self) -> None:
        with ThreadPoolExecutor(2) as pool:
            while not self.done.is_set():
                began = time.monotonic()
                quiet, restarted = pool.map(self._one, (0, 1))
                self.knocks.append((began, quiet, restarted))
                time.sleep(0.01)

    def stop(self) -> None:
        self.done.set()
        self.join()


def waiter(url: str, tid: str, marker: str, results: list[str]) -> None:
    body = {"input": {"text": f"sleep 4; echo {marker}-$((1+1))\r"}, "until": {"regex": f"{marker}-2"},
            "timeout_ms": 60_000}  # fmt: skip
    try:
        with httpx.Client(base_url=url, headers=AUTH, timeout=90) as api:
            answer = api.post(f"/v1/terminals/{tid}/act", json=body)
        if answer.status_code == 409:
            results.append(f"refused: {answer.text[:200]}")
            return
        screen = "\n".join(answer.json().get("screen", {}).get("text", []))
        ok = answer.json().get("ended") == "regex" and f"{marker}-2" in screen
        results.append("ok" if ok else f"wrong: {answer.status_code} {answer.text[:200]}")
    except (httpx.HTTPError, ValueError) as exc:
        results.append(f"failed: {exc!r}")


async def mcp_calls(urls: tuple[str, str], stop: asyncio.Event, calls: list[tuple[float, float | None, float | None]],
                    errors: tuple[list[str], list[str]]) -> None:  # fmt: skip
    """`terminal_list` every 100 ms on each daemon at once, through one session each: (start, seconds on each,
    None where it failed) of each call."""

    async def timed(session: Any, side: int) -> float | None:
        start = time.monotonic()
        try:
            await call(session, "terminal_list")
        except Exception as exc:  # noqa: BLE001 (every failure is a figure)
            errors[side].append(repr(exc))
            return None
        return time.monotonic() - start

    try:
        async with over_http(urls[0], TOKEN) as quiet, over_http(urls[1], TOKEN) as restarted:
            while not stop.is_set():
                start = time.monotonic()
                on_quiet, on_restarted = await asyncio.gather(timed(quiet, 0), timed(restarted, 1))
                calls.append((start, on_quiet, on_restarted))
                await asyncio.sleep(0.1)
    except Exception as exc:  # noqa: BLE001 (a session itself ended: a figure too, not a crash of the bench)
        errors[1].append(f"an MCP session ended: {exc!r}")


def clean_stop(daemon: Daemon, tids: list[str]) -> tuple[float, list[str]]:
    """Seconds from SIGTERM to the serving daemon (once it has read a 300 s wait on every terminal) until it is
    gone, and what each wait was answered."""
    body = {"until": {"regex": "never-printed"}, "timeout_ms": 300_000}
    waits = [InFlight(daemon.port, TOKEN, f"/v1/terminals/{tid}/wait", body) for tid in tids]
    deadline = time.monotonic() + 120
    while not all(wait.read_by_daemon() for wait in waits) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = lock_holder(daemon.workdir / "data")
    if pid is None:
        raise RuntimeError("no daemon holds the data dir")
    began = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    while _alive(pid) and time.monotonic() - began < 300:
        time.sleep(0.005)
    gone = time.monotonic() - began
    answers = []
    for wait in waits:
        answered = wait.answer(60)
        answer = answered[1] if answered is not None else {}
        resumable = answer.get("reason") == "stopping" and isinstance(answer.get("cursor"), int)
        answers.append("ok" if resumable else f"wrong: {answered}")
    return gone, answers


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def restart(daemon: Daemon) -> tuple[float, float, int]:
    """(when it began, when it returned, the new pid) of one `lookout restart`."""
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "lookout", "restart", "--data-dir", str(daemon.workdir / "data")],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"lookout restart failed: {done.stderr}")
    pid = int(done.stdout.rsplit("(pid ", 1)[1].split(")")[0])
    return began, time.monotonic(), pid


Knocks = list[tuple[float, float | None, float | None]]
"""(when it began, seconds on the quiet daemon, seconds on the restarted one; None where it failed)."""


@dataclass
class Run:
    """What the clients saw on the two daemons."""

    knocks: dict[str, Knocks] = field(default_factory=dict)
    failures: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    """By kind of request: what failed on the quiet daemon, and on the restarted one."""
    waits: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))
    windows: list[tuple[float, float]] = field(default_factory=list)
    """(began, returned) of each `lookout restart`."""
    stop_s: float = 0.0
    stopped_waits: list[str] = field(default_factory=list)


def _terminals(daemon: Daemon) -> list[str]:
    with daemon.client() as api:
        tids = [api.post("/v1/terminals", json={"command": ["bash", "--norc"], "cols": 80, "rows": 24}).json()["id"]
                for _ in range(WAITERS)]  # fmt: skip
        for tid in tids:
            api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "since": 0,
                                                         "timeout_ms": 30_000})  # fmt: skip
    return tids


async def side_by_side(rounds: int) -> Run:
    """`rounds` rounds of the same load on two daemons at once, the second hot restarted once in each round;
    then the clean stop of the second."""
    quiet, restarted = (Daemon(Path(tempfile.mkdtemp(prefix="lookout-bench-restart-load-"))) for _ in range(2))
    run = Run()
    try:
        quiet.start()
        restarted.start()
        tids = (_terminals(quiet), _terminals(restarted))
        knockers = {
            KINDS[0]: Knocker((f"{quiet.url}/healthz", f"{restarted.url}/healthz")),
            KINDS[1]: Knocker((f"{quiet.url}/v1/terminals/{tids[0][0]}", f"{restarted.url}/v1/terminals/{tids[1][0]}")),
        }
        for knocker in knockers.values():
            knocker.start()
        stop, calls, errors = asyncio.Event(), Knocks(), (list[str](), list[str]())
        mcp = asyncio.create_task(mcp_calls((quiet.url, restarted.url), stop, calls, errors))
        while not calls and not mcp.done():  # noqa: ASYNC110 (the first call on each daemon imports the MCP SDK)
            await asyncio.sleep(0.1)
        await asyncio.sleep(2)
        for number in range(rounds):
            _progress(f"restart {number + 1}/{rounds} ...")
            threads = [threading.Thread(target=waiter, args=(daemon.url, tid, f"R{number}W{i}", run.waits[side]))
                       for side, daemon in enumerate((quiet, restarted)) for i, tid in enumerate(tids[side])]  # fmt: skip
            for thread in threads:
                thread.start()
            await asyncio.sleep(0.5)
            began, returned, _ = await asyncio.to_thread(restart, restarted)
            run.windows.append((began, returned))
            for thread in threads:
                await asyncio.to_thread(thread.join, 90)
            await asyncio.sleep(2)
        stop.set()
        await mcp
        for kind, knocker in knockers.items():
            knocker.stop()
            run.knocks[kind], run.failures[kind] = knocker.knocks, knocker.failures
        run.knocks[KINDS[2]], run.failures[KINDS[2]] = calls, errors
        _progress("clean stop with a 300 s wait on every terminal ...")
        run.stop_s, run.stopped_waits = await asyncio.to_thread(clean_stop, restarted, tids[1])
    finally:
        quiet.stop()
        restarted.stop()
    return run


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def latency_row(knocks: Knocks, windows: list[tuple[float, float]]) -> dict[str, object]:
    """Worst and median on each daemon, and the worst added: the most a request sent during a restart (from 1 s
    before it to 1 s after it returned) took on the restarted daemon longer than the same request on the quiet
    one, sent at the same moment (None where none was answered); and the same worst among the requests sent
    outside the restarts: what the pairing shows where nothing was restarted, the machine's own noise."""
    quiet = [q for _, q, _ in knocks if q is not None]
    restarted = [r for _, _, r in knocks if r is not None]
    paired = [(any(a - 1 <= began <= b + 1 for a, b in windows), r - q) for began, q, r in knocks
              if q is not None and r is not None]  # fmt: skip
    return {
        "count": len(knocks), "quiet_median_ms": _ms(statistics.median(quiet) if quiet else None),
        "quiet_worst_ms": _ms(max(quiet, default=None)),
        "restarted_median_ms": _ms(statistics.median(restarted) if restarted else None),
        "restarted_worst_ms": _ms(max(restarted, default=None)),
        "added_worst_ms": _ms(max((added for during, added in paired if during), default=None)),
        "added_worst_outside_restarts_ms": _ms(max((added for during, added in paired if not during), default=None)),
    }  # fmt: skip


def _slowest_added(run: Run) -> None:
    """The requests the restarts slowed most, and when they began in their restart, to stderr."""
    for kind, knocks in run.knocks.items():
        paired = [(began, r - q) for began, q, r in knocks if q is not None and r is not None]
        for began, added in sorted(paired, key=lambda item: -item[1])[:3]:
            where = [
                f"{began - a:+.2f} s into a restart of {b - a:.2f} s" for a, b in run.windows if a - 1 <= began <= b + 1
            ]
            _progress(f"{kind}: {added * 1000:+.0f} ms beside the quiet daemon, began "
                      f"{where[0] if where else 'outside the restarts'}")  # fmt: skip


@contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """`count` processes that spin on the CPU meanwhile (a loaded machine, the same for both daemons)."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


async def measure(rounds: int, busy: int) -> dict[str, object]:
    """One side-by-side run with `busy` spinning processes: a row per kind of request, and the run's scalars."""
    before = os.getloadavg()[0]
    with busy_loops(busy):
        run = await side_by_side(rounds)
    _slowest_added(run)
    rows = {kind: latency_row(knocks, run.windows) for kind, knocks in run.knocks.items()}
    added = [rows[kind]["added_worst_ms"] for kind in KINDS[:2]]
    worst_added_ms = max((float(v) for v in added if isinstance(v, float)), default=None)
    for kind, (_, on_restarted) in run.failures.items():
        for failure in on_restarted[:3]:
            _progress(f"failed {kind}: {failure}")
    for wait in [w for w in [*run.waits[1], *run.stopped_waits] if w != "ok"][:3]:
        _progress(f"wait: {wait}")
    failed = {kind: len(on_restarted) for kind, (_, on_restarted) in run.failures.items()}
    return {
        "busy_loops": busy,
        "load_average_1min": f"{before:.1f} -> {os.getloadavg()[0]:.1f}",
        "restarts": rounds,
        "latency": rows,
        "connections_worst_added_ms": worst_added_ms,
        "connections_refused_or_failed": failed[KINDS[0]] + failed[KINDS[1]],
        "connections_failed_on_the_quiet_daemon": sum(len(run.failures[kind][0]) for kind in KINDS[:2]),
        "mcp_calls_failed": failed[KINDS[2]],
        "waits": len(run.waits[1]),
        "inputs_refused": sum(w.startswith("refused") for w in run.waits[1]),
        "waits_wrong_or_failed": sum(w != "ok" and not w.startswith("refused") for w in run.waits[1]),
        "waits_wrong_or_failed_on_the_quiet_daemon": sum(w != "ok" for w in run.waits[0]),
        "restart_returned_s": round(statistics.median(b - a for a, b in run.windows), 3),
        "clean_stop_s": round(run.stop_s, 3),
        "clean_stop_waits": len(run.stopped_waits),
        "clean_stop_waits_not_resumable": sum(result != "ok" for result in run.stopped_waits),
        "goal_no_refused": not any(failed.values()),
        "goal_worst_added_le_300ms": worst_added_ms is not None and worst_added_ms <= GOAL_ADDED_WORST_S * 1000,
    }


def show(figures: dict[str, object]) -> None:
    print(f"\nrestart_load with {figures['busy_loops']} busy loops (load average {figures['load_average_1min']}): "
          f"{figures['restarts']} x `lookout restart` beside as many rounds on a quiet daemon; a new connection every "
          f"10 ms for each of two requests, an MCP client calling every 100 ms, {WAITERS} waits\n")  # fmt: skip
    print(f"{'request':<26} {'quiet median':>13} {'quiet worst':>12} {'restarted median':>17} {'restarted worst':>16} "
          f"{'added worst':>12} {'outside restarts':>17}  (ms)")  # fmt: skip
    rows = figures["latency"]
    assert isinstance(rows, dict)
    for kind, row in rows.items():
        cells = [row[k] for k in ("quiet_median_ms", "quiet_worst_ms", "restarted_median_ms", "restarted_worst_ms",
                                  "added_worst_ms", "added_worst_outside_restarts_ms")]  # fmt: skip
        widths = (13, 12, 17, 16, 12, 17)
        print(f"{kind:<26} " + " ".join(f"{'-' if c is None else c:>{w}}" for c, w in zip(cells, widths, strict=True)))
    print()
    for key, value in figures.items():
        if key not in ("latency", "busy_loops", "load_average_1min", "restarts") and not key.startswith("goal"):
            print(f"{key:<40} {value!s:>10}")
    refused = "PASS" if figures["goal_no_refused"] else "MISS"
    late = "PASS" if figures["goal_worst_added_le_300ms"] else "MISS"
    print(f"\ngoal: no connection refused ..... {refused}")
    print(f"goal: no connection waits more than {GOAL_ADDED_WORST_S * 1000:.0f} ms longer than on the quiet daemon: "
          f"{figures['connections_worst_added_ms']} ms ..... {late}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--busy", type=lambda v: [int(n) for n in v.split(",")], default=[0, 4],
                        help="a run for each number of processes spinning on the CPU meanwhile (default 0,4)")  # fmt: skip
    args = parser.parse_args()
    runs = []
    for busy in args.busy:
        _progress(f"with {busy} busy loops ...")
        runs.append(asyncio.run(measure(args.restarts, busy)))
        show(runs[-1])
    latency = {}
    for run in runs:
        rows = run["latency"]
        assert isinstance(rows, dict)
        latency.update({f"{kind}, {run['busy_loops']} busy loops": row for kind, row in rows.items()})
    print(json.dumps({"bench": "restart_load", "latency": latency,
                      "runs": [{k: v for k, v in run.items() if k != "latency"} for run in runs]}))  # fmt: skip


if __name__ == "__main__":
    main()
