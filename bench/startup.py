"""Start-up benchmark: how long `lookout serve` takes to answer /healthz, and what importing the app costs.

Each run starts `python -m app serve` with a fresh data dir and polls /healthz every 10 ms until it answers
200; the import figure is `python -c "import app.server"` minus a bare `python -c pass`, both in fresh
interpreters. The goal (issue 20) is at most 1.5 s to healthy. The last line is one JSON object.

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


def time_to_healthy() -> float:
    """Seconds from spawning the daemon to its first 200 on /healthz."""
    with tempfile.TemporaryDirectory() as workdir:
        port = _free_port()
        cmd = [sys.executable, "-m", "app", "serve", "--port", str(port), "--data-dir", f"{workdir}/data"]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    healthy = [time_to_healthy() for _ in range(args.runs)]
    imports = [interpreter_seconds("import app.server") - interpreter_seconds("pass") for _ in range(args.runs)]
    figures = {
        "bench": "startup",
        "runs": args.runs,
        "healthy_s": {"median": statistics.median(healthy), "min": min(healthy), "max": max(healthy)},
        "import_s": {"median": statistics.median(imports), "min": min(imports), "max": max(imports)},
        "goal_healthy_s": GOAL_S,
    }
    print(f"{'':24} {'median':>8} {'min':>8} {'max':>8}")
    for label, key in (("to /healthz (s)", "healthy_s"), ("import app.server (s)", "import_s")):
        row = figures[key]
        print(f"{label:24} {row['median']:8.2f} {row['min']:8.2f} {row['max']:8.2f}")
    print(f"goal: healthy within {GOAL_S} s")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
