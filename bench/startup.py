"""Start-up benchmark: how long `lookout serve` takes to answer /healthz, and what importing the app costs.

Each run starts `python -m app serve` with a fresh data dir and polls /healthz every 10 ms until it answers
200; the import figure is `python -c "import app.server"` minus a bare `python -c pass`, both in fresh
interpreters. Beside each figure, the same measured with the imports lookout made at start before they
were deferred to first use (`EAGER`: Playwright and adbutils), so the gain is measured in the same run;
the two kinds of run alternate, as the machine may be shared. The goal (issue 20) is at most 1.5 s to
healthy. The load average is printed with the figures. The last line is one JSON object.

    .venv/bin/python bench/startup.py [--runs 7]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import REPO, TOKEN, _free_port  # noqa: E402

GOAL_S = 1.5
EAGER = ("playwright.async_api", "adbutils", "adbutils._adb", "adbutils.errors")
"""What the daemon imported at start before issue 20 deferred it to first use."""
PRELOAD = f"import {', '.join(EAGER)}; "
SERVE_EAGER = PRELOAD + "import runpy, sys; sys.argv = ['lookout', *sys.argv[1:]]; runpy.run_module('app', run_name='__main__')"


def time_to_healthy(eager: bool) -> float:
    """Seconds from spawning the daemon to its first 200 on /healthz."""
    with tempfile.TemporaryDirectory() as workdir:
        port = _free_port()
        serve = ["serve", "--port", str(port), "--data-dir", f"{workdir}/data"]
        cmd = [sys.executable, "-c", SERVE_EAGER, *serve] if eager else [sys.executable, "-m", "app", *serve]
        env = {**os.environ, "LOOKOUT_TOKEN": TOKEN}
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"the daemon exited with {proc.returncode}")
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                        return time.perf_counter() - start
                except httpx.TransportError:
                    time.sleep(0.01)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def interpreter_seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
    return time.perf_counter() - start


def import_seconds(eager: bool) -> float:
    """`import app.server` (after the eager imports when `eager`), less an empty interpreter's start."""
    return interpreter_seconds((PRELOAD if eager else "") + "import app.server") - interpreter_seconds("pass")


def stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    load_before = os.getloadavg()
    measured: dict[str, list[float]] = {"healthy_s": [], "healthy_eager_s": [], "import_s": [], "import_eager_s": []}
    for run in range(args.runs):
        for eager in (run % 2 == 1, run % 2 == 0):  # alternate which goes first
            suffix = "_eager_s" if eager else "_s"
            measured["healthy" + suffix].append(time_to_healthy(eager))
            measured["import" + suffix].append(import_seconds(eager))
    load_after = os.getloadavg()
    figures: dict[str, object] = {"bench": "startup", "runs": args.runs}
    figures.update({key: stats(values) for key, values in measured.items()})
    figures.update(goal_healthy_s=GOAL_S, loadavg_before=load_before, loadavg_after=load_after)
    print(f"load average (1, 5, 15 min): before {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.2f}' for x in load_after)}")  # fmt: skip
    print(f"{'':40} {'median':>8} {'min':>8} {'max':>8}")
    rows = (("to /healthz (s)", "healthy_s"), ("  with Playwright, adbutils at start", "healthy_eager_s"),
            ("import app.server (s)", "import_s"), ("  with Playwright, adbutils at start", "import_eager_s"))  # fmt: skip
    for label, key in rows:
        row = measured[key]
        print(f"{label:40} {statistics.median(row):8.2f} {min(row):8.2f} {max(row):8.2f}")
    met = statistics.median(measured["healthy_s"]) <= GOAL_S
    print(f"goal: healthy within {GOAL_S} s ({'met' if met else 'NOT met'} by the median)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
