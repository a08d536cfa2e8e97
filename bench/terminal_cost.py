"""Terminal cost benchmark: what opening terminals and keeping them costs, beside tmux in the same run.

- Opening: `--sessions` terminals (default 100) running the user's shell, opened one after another through
  the API (`POST /v1/terminals`: each returns once its program runs under its holder and the daemon follows
  it), beside as many `tmux new-session -d` of a private tmux server (each returns once the server runs the
  shell in a new pane). The two take turns, `--batch` at a time (who goes first alternates), so that both
  meet the same machine: the load of the shells started before (each reads the user's rc files), and
  whatever else the machine does meanwhile.
- Memory: the proportional set size (PSS, `/proc/<pid>/smaps_rollup`) of every holder once the shells are at
  their prompt (a holder's own pages; the shell is not counted), beside what each session adds to the tmux
  server (its PSS with the sessions, less with one, per session).

- Ending: all of them at once, `lookout kill --all` (or with `--end delete`, a DELETE of each through the API,
  all in parallel), each with the whole stop ladder and returning once its program is gone, beside a
  `tmux kill-session` of each session one after another (each returns once it has sent SIGHUP).

The goals (issue 36): opening costs no more than tmux's new-session (1.0x), and a holder at most 2 MB PSS;
(issue 47) ending them within 2x of tmux's kill-session.

    .venv/bin/python bench/terminal_cost.py [--sessions 100] [--batch 1] [--end kill|delete]
"""

from __future__ import annotations

import argparse
import asyncio
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

import httpx
from terminal_ingest import REPO, TOKEN, Daemon
from tmux_server import TmuxServer

os.environ.setdefault("PYENV_REHASH_TIMEOUT", "1")
"""Both lookout's shells and tmux's source the user's ~/.bashrc; on a machine where it runs `pyenv rehash`, a shell
killed in the middle of one leaves its lock behind, and every later shell would wait 60 s for it."""

GOAL_OPEN_RATIO = 1.0
GOAL_HOLDER_MB = 2.0
GOAL_END_RATIO = 2.0
SHELL = os.environ.get("BENCH_SHELL", "bash")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def pss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    raise RuntimeError(f"no Pss for pid {pid}")


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


SPEC = {"command": [SHELL], "cols": 80, "rows": 24}


def opened_in_turns(daemon: Daemon, tmux: TmuxServer, sessions: int, batch: int) -> tuple[list[float], list[float]]:
    """Seconds each open took, lookout's and tmux's, opened in turns of `batch`."""
    lookout_times: list[float] = []
    tmux_times: list[float] = []
    with daemon.client(timeout=120) as api:

        def lookout_opens() -> None:
            for _ in range(min(batch, sessions - len(lookout_times))):
                start = time.perf_counter()
                api.post("/v1/terminals", json=SPEC).raise_for_status()
                lookout_times.append(time.perf_counter() - start)

        def tmux_opens() -> None:
            for _ in range(min(batch, sessions - len(tmux_times))):
                start = time.perf_counter()
                tmux("new-session", "-d", "-s", f"s{len(tmux_times) + 1}", "-x", "80", "-y", "24", SHELL)
                tmux_times.append(time.perf_counter() - start)

        turn = 0
        while len(lookout_times) < sessions or len(tmux_times) < sessions:
            for opens in (lookout_opens, tmux_opens) if turn % 2 else (tmux_opens, lookout_opens):
                opens()
            turn += 1
    return lookout_times, tmux_times


def ended(daemon: Daemon, tmux: TmuxServer, sessions: int, how: str) -> tuple[float, float]:
    """Seconds to end every terminal (`lookout kill --all`, or a DELETE of each in parallel), and every tmux
    session (`tmux kill-session` of each, one after another)."""
    with daemon.client() as api:
        ids = [t["id"] for t in api.get("/v1/terminals").json()["terminals"] if t["status"] == "running"]
    start = time.perf_counter()
    if how == "kill":
        subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(daemon.workdir / "data")],
                       cwd=REPO, capture_output=True, check=True, timeout=600)  # fmt: skip
    else:
        asyncio.run(_deleted(daemon.url, ids))
    lookout_s = time.perf_counter() - start
    start = time.perf_counter()
    for n in range(sessions + 1):
        tmux("kill-session", "-t", f"s{n}")
    return lookout_s, time.perf_counter() - start


async def _deleted(url: str, ids: list[str]) -> None:
    limits = httpx.Limits(max_connections=len(ids))
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=600,
                                 limits=limits) as api:  # fmt: skip
        for answer in await asyncio.gather(*(api.delete(f"/v1/terminals/{tid}") for tid in ids)):
            answer.raise_for_status()


def _p90(seconds: list[float]) -> float:
    return sorted(seconds)[int(len(seconds) * 0.9)]


def holders_kb(daemon: Daemon) -> list[int]:
    """The PSS (KB) of each holder of the daemon's terminals (the parent of each terminal's program)."""
    with daemon.client() as api:
        pids = [t["pid"] for t in api.get("/v1/terminals").json()["terminals"]]
    return [pss_kb(parent(pid)) for pid in pids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--end", choices=["kill", "delete"], default="kill")
    args = parser.parse_args()
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-cost-"))
        stack.callback(shutil.rmtree, workdir, True)
        daemon = Daemon(workdir, env={"LOOKOUT_MAX_SESSIONS": str(args.sessions + 10)})
        stack.callback(daemon.stop)
        daemon.start()
        server = stack.enter_context(TmuxServer("bench-cost"))
        _progress(f"{args.sessions} terminals and {args.sessions} tmux sessions, {args.batch} at a time in turns ...")
        with daemon.client() as api:  # each warmed up with one
            api.post("/v1/terminals", json=SPEC).raise_for_status()
        server("new-session", "-d", "-s", "s0", "-x", "80", "-y", "24", SHELL)
        server_pid = int(server("display", "-p", "#{pid}").strip())
        time.sleep(1)
        base = pss_kb(server_pid)
        times, tmux_times = opened_in_turns(daemon, server, args.sessions, args.batch)
        time.sleep(3)  # the shells at their prompt
        holders = holders_kb(daemon)
        tmux_kb = (pss_kb(server_pid) - base) / args.sessions
        _progress(f"ending them ({'lookout kill --all' if args.end == 'kill' else 'DELETE of each, in parallel'}) ...")
        end_s, tmux_end_s = ended(daemon, server, args.sessions, args.end)
    total, tmux_total = sum(times), sum(tmux_times)
    ratio = total / tmux_total
    holder_mb, tmux_mb = statistics.mean(holders) / 1024, tmux_kb / 1024
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"\nterminal_cost: {args.sessions} terminals of {SHELL}, opened one after another ({args.batch} at a time, "
          "in turns with tmux)\n")  # fmt: skip
    print(f"{'what':<48} {'lookout':>10} {version:>12}")
    print(f"{'opening all of them, s':<48} {total:10.2f} {tmux_total:12.2f}")
    print(
        f"{'one, median ms':<48} {statistics.median(times) * 1000:10.1f} {statistics.median(tmux_times) * 1000:12.1f}"
    )
    print(f"{'one, p90 ms':<48} {_p90(times) * 1000:10.1f} {_p90(tmux_times) * 1000:12.1f}")
    print(f"{'memory per terminal (holder / added to the server), MB PSS':<48} {holder_mb:10.2f} {tmux_mb:12.2f}")
    end_what = "lookout kill --all" if args.end == "kill" else "DELETE of each in parallel"
    print(f"{'ending all of them (' + end_what + '), s':<48} {end_s:10.2f} {tmux_end_s:12.2f}")
    end_ratio = end_s / tmux_end_s
    open_verdict = "PASS" if ratio <= GOAL_OPEN_RATIO else "MISS"
    memory_verdict = "PASS" if holder_mb <= GOAL_HOLDER_MB else "MISS"
    print(f"\ngoal: opening within {GOAL_OPEN_RATIO}x of tmux: {ratio:.2f}x ..... {open_verdict}")
    print(f"goal: a holder at most {GOAL_HOLDER_MB} MB PSS: {holder_mb:.2f} MB ..... {memory_verdict}")
    end_verdict = "PASS" if end_ratio <= GOAL_END_RATIO else "MISS"
    print(f"goal: ending them within {GOAL_END_RATIO}x of tmux's kill-session: {end_ratio:.2f}x ..... {end_verdict}")
    figures = {
        "bench": "terminal_cost",
        "sessions": args.sessions,
        "open_all_s": round(total, 3),
        "tmux_open_all_s": round(tmux_total, 3),
        "open_vs_tmux": round(ratio, 2),
        "open_median_ms": round(statistics.median(times) * 1000, 1),
        "tmux_open_median_ms": round(statistics.median(tmux_times) * 1000, 1),
        "open_p90_ms": round(_p90(times) * 1000, 1),
        "tmux_open_p90_ms": round(_p90(tmux_times) * 1000, 1),
        "holder_pss_mb": round(holder_mb, 2),
        "holder_pss_max_mb": round(max(holders) / 1024, 2),
        "tmux_per_session_mb": round(tmux_mb, 3),
        "end": args.end,
        "end_all_s": round(end_s, 3),
        "tmux_kill_all_s": round(tmux_end_s, 3),
        "end_vs_tmux": round(end_ratio, 2),
        "goal_open_within_tmux": ratio <= GOAL_OPEN_RATIO,
        "goal_end_within_2x_tmux": end_ratio <= GOAL_END_RATIO,
        "goal_holder_le_2mb": holder_mb <= GOAL_HOLDER_MB,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
