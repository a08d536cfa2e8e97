"""Start-up benchmark: how long `lookout serve` takes to answer /healthz, beside the import of its frameworks.

Each run starts `python -m lookout serve` with a fresh data dir and polls /healthz until it answers 200 (the start
is the floor of every restart); beside it, in the same run, `python -c "import fastapi, uvicorn"`, the frameworks
alone, which no daemon built on them can start faster than; and a bare `python -c pass`. The daemon imports with
the cyclic collector paused (lookout.launch), which the peer does not: the frameworks' import paused the same way is
printed too, so that what the pause gives and what lookout's own code costs are both in view. The kinds of run
alternate, as the machine may be shared; the CPU time the daemon used is printed too, being far less disturbed
by other work. The goal (issue 36): the start within 1.3x of the frameworks' import. The last line is one JSON
object.

    .venv/bin/python bench/startup.py [--runs 9]
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

GOAL_RATIO = 1.3


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a running process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_healthy() -> tuple[float, float]:
    """Wall-clock seconds from spawning the daemon to its first 200 on /healthz, and its CPU seconds then."""
    with tempfile.TemporaryDirectory() as workdir:
        port = _free_port()
        cmd = [sys.executable, "-m", "lookout", "serve", "--port", str(port), "--data-dir", f"{workdir}/data"]
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
                        time.sleep(0.005)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "lookout"], cwd=REPO, check=True)
    load_before = os.getloadavg()
    names = ("healthy", "frameworks", "frameworks_paused", "python")
    runs: dict[str, list[float]] = {key: [] for name in names for key in (name, name + "_cpu")}
    for run in range(args.runs):
        steps = [("healthy", time_to_healthy), ("frameworks", lambda: interpreter_seconds("import fastapi, uvicorn")),
                 ("frameworks_paused", lambda: interpreter_seconds("import gc; gc.disable(); import fastapi, uvicorn")),
                 ("python", lambda: interpreter_seconds("pass"))]  # fmt: skip
        for name, measure in steps if run % 2 else reversed(steps):  # alternate which goes first
            wall, cpu = measure()
            runs[name].append(wall)
            runs[name + "_cpu"].append(cpu)
    median = {key: statistics.median(values) for key, values in runs.items()}
    ratio = median["healthy"] / median["frameworks"]
    cpu_ratio = median["healthy_cpu"] / median["frameworks_cpu"]
    print(f"load average: before {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")  # fmt: skip
    print(f"{'median of ' + str(args.runs) + ' runs':<52} {'wall s':>8} {'CPU s':>8}")
    print(f"{'lookout serve, to its first 200 on /healthz':<52} {median['healthy']:8.3f} {median['healthy_cpu']:8.3f}")
    peer = 'python -c "import fastapi, uvicorn" (the peer)'
    print(f"{peer:<52} {median['frameworks']:8.3f} {median['frameworks_cpu']:8.3f}")
    paused = "the same, the collector paused as lookout does"
    print(f"{paused:<52} {median['frameworks_paused']:8.3f} {median['frameworks_paused_cpu']:8.3f}")
    print(f"{'python -c pass':<52} {median['python']:8.3f} {median['python_cpu']:8.3f}")
    verdict = "PASS" if ratio <= GOAL_RATIO else "MISS"
    print(f"\ngoal: start within {GOAL_RATIO}x of importing fastapi and uvicorn: {ratio:.2f}x (CPU {cpu_ratio:.2f}x) "
          f"..... {verdict}")  # fmt: skip
    figures = {
        "bench": "startup",
        "runs": args.runs,
        "healthy_s": round(median["healthy"], 3),
        "healthy_cpu_s": round(median["healthy_cpu"], 3),
        "import_fastapi_uvicorn_s": round(median["frameworks"], 3),
        "import_fastapi_uvicorn_cpu_s": round(median["frameworks_cpu"], 3),
        "import_fastapi_uvicorn_collector_paused_s": round(median["frameworks_paused"], 3),
        "python_s": round(median["python"], 3),
        "start_vs_frameworks": round(ratio, 2),
        "start_vs_frameworks_collector_paused": round(median["healthy"] / median["frameworks_paused"], 2),
        "start_vs_frameworks_cpu": round(cpu_ratio, 2),
        "goal_start_within_1_3x": ratio <= GOAL_RATIO,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
