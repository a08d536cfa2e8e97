"""Start-up benchmark: how long `lookout serve` takes to answer /healthz, and what importing the app costs.

Each run starts `python -m app serve` with a fresh data dir and polls /healthz every 10 ms until it answers
200; the import figure is `python -c "import app.server"` minus a bare `python -c pass`, both in fresh
interpreters. Beside each figure, the same as lookout started before these were deferred to first use:
Playwright and adbutils imported at start (`EAGER`), and, for the daemon, the tokenizer loaded as soon as it
listened (`SERVE_BEFORE`), so the gain is measured in the same run; the two kinds of run alternate, as the
machine may be shared. Wall-clock time is what the goal names (issue
20: at most 1.5 s to healthy); the CPU time the daemon (or the import) used is printed too, being far less
disturbed by other work on the machine. The load average is printed with the figures. The last line is one
JSON object.

    .venv/bin/python bench/startup.py [--runs 7]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import REPO, TOKEN, _free_port

GOAL_S = 1.5
EAGER = ("playwright.async_api", "adbutils", "adbutils._adb", "adbutils.errors")
"""What the daemon imported at start before issue 20 deferred it to first use."""
PRELOAD = f"import {', '.join(EAGER)}; "
SERVE_BEFORE = PRELOAD + """
import asyncio, runpy, sys
import uvicorn
from app.core import tokens

listen = uvicorn.Server.startup

async def startup(self, sockets=None):  # the tokenizer was loaded in a thread as soon as the daemon listened
    await listen(self, sockets)
    if self.started:
        self.warming = asyncio.create_task(asyncio.to_thread(tokens.warm_up))

uvicorn.Server.startup = startup
sys.argv = ["lookout", *sys.argv[1:]]
runpy.run_module("app", run_name="__main__")
"""


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a running process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_healthy(before: bool) -> tuple[float, float]:
    """Wall-clock seconds from spawning the daemon to its first 200 on /healthz, and its CPU seconds then."""
    with tempfile.TemporaryDirectory() as workdir:
        port = _free_port()
        serve = ["serve", "--port", str(port), "--data-dir", f"{workdir}/data"]
        cmd = [sys.executable, "-c", SERVE_BEFORE, *serve] if before else [sys.executable, "-m", "app", *serve]
        env = {**os.environ, "LOOKOUT_TOKEN": TOKEN}
        with httpx.Client(timeout=30) as client:  # made once: a client per poll costs CPU the daemon needs
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                while True:
                    if proc.poll() is not None:
                        raise RuntimeError(f"the daemon exited with {proc.returncode}")
                    try:
                        if client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                            return time.perf_counter() - start, cpu_seconds(proc.pid)
                    except httpx.TransportError:
                        time.sleep(0.01)
            finally:
                proc.terminate()
                proc.wait(timeout=30)


def interpreter_seconds(code: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds of `python -c code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def import_seconds(before: bool) -> tuple[float, float]:
    """`import app.server` (after the eager imports when `before`), less an empty interpreter's start."""
    wall, cpu = interpreter_seconds((PRELOAD if before else "") + "import app.server")
    bare_wall, bare_cpu = interpreter_seconds("pass")
    return wall - bare_wall, cpu - bare_cpu


ROWS = (
    ("healthy_s", "to /healthz, wall (s)"),
    ("healthy_before_s", "  as before (eager imports, warm-up)"),
    ("healthy_cpu_s", "to /healthz, daemon CPU (s)"),
    ("healthy_cpu_before_s", "  as before (eager imports, warm-up)"),
    ("import_s", "import app.server, wall (s)"),
    ("import_before_s", "  as before (eager imports)"),
    ("import_cpu_s", "import app.server, CPU (s)"),
    ("import_cpu_before_s", "  as before (eager imports)"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    load_before = os.getloadavg()
    measured: dict[str, list[float]] = {key: [] for key, _ in ROWS}
    for run in range(args.runs):
        for before in (run % 2 == 1, run % 2 == 0):  # alternate which goes first
            suffix = "_before_s" if before else "_s"
            for name, (wall, cpu) in (("healthy", time_to_healthy(before)), ("import", import_seconds(before))):
                measured[name + suffix].append(wall)
                measured[name + "_cpu" + suffix].append(cpu)
    load_after = os.getloadavg()
    figures: dict[str, object] = {"bench": "startup", "runs": args.runs}
    for key, values in measured.items():
        figures[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    figures.update(goal_healthy_s=GOAL_S, loadavg_before=load_before, loadavg_after=load_after)
    print(f"load average (1, 5, 15 min): before {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.2f}' for x in load_after)}")  # fmt: skip
    print(f"{'':40} {'median':>8} {'min':>8} {'max':>8}")
    for key, label in ROWS:
        values = measured[key]
        print(f"{label:40} {statistics.median(values):8.2f} {min(values):8.2f} {max(values):8.2f}")
    met = statistics.median(measured["healthy_s"]) <= GOAL_S
    print(f"goal: healthy within {GOAL_S} s, wall ({'met' if met else 'NOT met'} by the median)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
