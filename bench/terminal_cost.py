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

With `--case recovery` (issue 47, item 6): what the terminals that have ended cost a daemon. A data dir holds
`--exited` terminals (default 500) whose programs have ended, opened and ended through the daemon (each printed
some lines), and `--sessions` busy terminals (each printing a line every 20 ms). The daemon is killed
(`kill -9`, the daemon alone) and started again, `--runs` times; each run is timed from the new process's start
until `GET /v1/terminals` lists every busy one running and each one's screen was answered (one after the other).
Beside it, in the same run and on the same machine, tmux with as many busy panes: a new client's
`tmux list-panes -a`, then a `capture-pane -p` of each (tmux keeps nothing of ended sessions). While one side
is timed, the other side's programs are stopped (SIGSTOP), so that each meets its own busy programs only. The daemon's
memory (RSS and PSS) once the screens were read, then once every exited terminal was listed and its screen read
once; then the exited terminals are purged and the same is measured with none. Goals: every screen within 1.5x
of tmux's list and capture, and the daemon's memory with the exited terminals within 10% of none.

    .venv/bin/python bench/terminal_cost.py [--sessions 100] [--batch 1] [--end kill|delete]
    .venv/bin/python bench/terminal_cost.py --case recovery [--sessions 100] [--exited 500] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from terminal_ingest import REPO, TOKEN, Daemon
from terminal_restart import BUSY_ARGV, restart
from tmux_server import TmuxServer

os.environ.setdefault("PYENV_REHASH_TIMEOUT", "1")
"""Both lookout's shells and tmux's source the user's ~/.bashrc; on a machine where it runs `pyenv rehash`, a shell
killed in the middle of one leaves its lock behind, and every later shell would wait 60 s for it."""

GOAL_OPEN_RATIO = 1.0
GOAL_HOLDER_MB = 2.0
GOAL_END_RATIO = 2.0
GOAL_RECOVERY_RATIO = 1.5
GOAL_EXITED_MEMORY_RATIO = 1.1
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


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process, KB."""
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS:"))  # fmt: skip
    return rss, pss_kb(pid)


async def _in_parallel(url: str, requests: Sequence[tuple[str, str, dict[str, Any] | None]], at_once: int) -> list[Any]:
    """The JSON answers of (method, path, body) requests, `at_once` in flight."""
    gate = asyncio.Semaphore(at_once)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=600) as api:

        async def one(method: str, path: str, body: dict[str, Any] | None) -> Any:
            async with gate:
                answer = await api.request(method, path, json=body)
                answer.raise_for_status()
                return answer.json()

        return await asyncio.gather(*(one(*request) for request in requests))


def made_exited(url: str, count: int) -> list[str]:
    """`count` terminals opened through the daemon at `url` whose programs printed some lines and ended."""
    spec = {"command": "seq 1 200; echo ended", "cols": 80, "rows": 24}
    made = asyncio.run(_in_parallel(url, [("POST", "/v1/terminals", spec)] * count, 8))
    ids = {t["id"] for t in made}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as api:
        while (
            sum(t["status"] == "exited" for t in api.get("/v1/terminals").json()["terminals"] if t["id"] in ids) < count
        ):
            time.sleep(0.2)
    return sorted(ids)


def tmux_list_and_capture(tmux: TmuxServer, sessions: int) -> float:
    """Seconds a new client takes to list every pane (`list-panes -a`), and a client each to capture them."""
    start = time.perf_counter()
    panes = tmux("list-panes", "-a", "-F", "#{pane_id}").split()
    if len(panes) != sessions:
        raise RuntimeError(f"tmux lists {len(panes)} panes, not {sessions}")
    for pane in panes:
        tmux("capture-pane", "-p", "-t", pane)
    return time.perf_counter() - start


@contextmanager
def stopped(pids: list[int]) -> Iterator[None]:
    """The processes `pids` stopped (SIGSTOP) meanwhile, in that order, and continued in the reverse order. A
    parent that continues its stopped children (tmux's server does, for its panes) is stopped before them."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    for pid in pids:
        eventually_stopped(pid)
    try:
        yield
    finally:
        for pid in reversed(pids):
            os.kill(pid, signal.SIGCONT)


def eventually_stopped(pid: int) -> None:
    """Wait until process `pid` is stopped; raise when it is not within a second (something continued it)."""
    deadline = time.monotonic() + 1
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        if time.monotonic() > deadline:
            raise RuntimeError(f"process {pid} was continued while the other side was timed")
        time.sleep(0.005)


def beside_tmux(recover: Callable[[], tuple[float, float]], panes: list[int], programs: list[int], tmux: TmuxServer,
                sessions: int, label: str) -> tuple[float, float, float]:  # fmt: skip
    """One recovery (`recover`: seconds until all are listed running, and until every screen) with tmux's `panes`
    stopped, then tmux's list and capture with lookout's `programs` stopped: the three figures, said on stderr."""
    with stopped(panes):
        running, screened = recover()
    with stopped(programs):
        tmux_s = tmux_list_and_capture(tmux, sessions)
    _progress(f"  {label}: all running {running:.3f} s, every screen {screened:.3f} s; tmux list-panes and "
              f"capture-pane {tmux_s:.3f} s")  # fmt: skip
    return running, screened, tmux_s


def recovered(daemon: Daemon, tmux: TmuxServer, busy: list[str], runs: int) -> dict[str, float]:
    """Median seconds of `runs` kill -9 recoveries (until listed running, until every screen), each beside
    tmux's list and capture (each with the other's programs stopped); the new daemon's memory (KB) after the
    last."""
    with daemon.client() as api:
        programs = [t["pid"] for t in api.get("/v1/terminals").json()["terminals"] if t["id"] in set(busy)]
    server = int(tmux("display", "-p", "#{pid}"))
    panes = [server] + [int(pid) for pid in tmux("list-panes", "-a", "-F", "#{pane_pid}").split()]
    runnings, screens, tmuxes = [], [], []
    for run in range(1, runs + 1):
        running, screened, tmux_s = beside_tmux(partial(restart, daemon, busy), panes, programs, tmux, len(busy),
                                                f"run {run}/{runs}")  # fmt: skip
        runnings.append(running)
        screens.append(screened)
        tmuxes.append(tmux_s)
    assert daemon.proc is not None
    rss, pss = memory_kb(daemon.proc.pid)
    return {"running_s": statistics.median(runnings), "screens_s": statistics.median(screens),
            "tmux_s": statistics.median(tmuxes), "rss_kb": rss, "pss_kb": pss}  # fmt: skip


def recovery_case(args: argparse.Namespace) -> None:
    """See the module's docstring (`--case recovery`)."""
    # the daemon's bytecode is written first, as `make run` does: where PYTHONDONTWRITEBYTECODE is set, every start
    # would compile its modules again (a deployed lookout has its bytecode)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "lookout"], cwd=REPO, check=True)
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-recovery-"))
        stack.callback(shutil.rmtree, workdir, True)
        daemon = Daemon(workdir, env={"LOOKOUT_MAX_SESSIONS": str(args.sessions + 20)})
        stack.callback(daemon.stop)
        stack.push(daemon.show_log_on_error)
        daemon.start()
        tmux = stack.enter_context(TmuxServer("bench-recovery"))
        _progress(f"{args.exited} terminals that end ...")
        exited = made_exited(daemon.url, args.exited)
        _progress(f"{args.sessions} busy terminals and {args.sessions} busy tmux sessions ...")
        busy = [t["id"] for t in asyncio.run(_in_parallel(
            daemon.url, [("POST", "/v1/terminals", {"command": BUSY_ARGV, "cols": 80, "rows": 24})] * args.sessions, 4,
        ))]  # fmt: skip
        for i in range(args.sessions):
            tmux("new-session", "-d", "-s", f"s{i}", "-x", "80", "-y", "24", *BUSY_ARGV)
        time.sleep(2)
        _progress(f"kill -9 with {args.exited} exited terminals in the data dir ...")
        full = recovered(daemon, tmux, busy, args.runs)
        asyncio.run(_in_parallel(daemon.url, [("GET", "/v1/terminals", None)]
                                 + [("GET", f"/v1/terminals/{tid}/screen", None) for tid in exited], 4))  # fmt: skip
        assert daemon.proc is not None
        full_asked_rss, full_asked_pss = memory_kb(daemon.proc.pid)
        _progress(f"purging the {args.exited} exited terminals; kill -9 with none ...")
        asyncio.run(
            _in_parallel(daemon.url, [("DELETE", f"/v1/terminals/{tid}?purge=true", None) for tid in exited], 8)
        )
        empty = recovered(daemon, tmux, busy, args.runs)
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True, check=False).stdout.strip()
    ratio, empty_ratio = full["screens_s"] / full["tmux_s"], empty["screens_s"] / empty["tmux_s"]
    memory_ratio = full["rss_kb"] / empty["rss_kb"]
    print(f"\nterminal_cost (recovery): {args.sessions} busy terminals, kill -9 of the daemon, median of {args.runs} "
          f"runs, with {args.exited} exited terminals in the data dir and with none\n")  # fmt: skip
    print(f"{'what':<62} {args.exited:>5} exited {'none':>8}")
    print(f"{'lookout: new daemon until all are listed running, s':<62} {full['running_s']:12.2f} "
          f"{empty['running_s']:8.2f}")  # fmt: skip
    print(f"{'lookout: new daemon until every screen was answered, s':<62} {full['screens_s']:12.2f} "
          f"{empty['screens_s']:8.2f}")  # fmt: skip
    print(
        f"{version + ': list-panes -a and capture-pane of each, s':<62} {full['tmux_s']:12.2f} {empty['tmux_s']:8.2f}"
    )
    print(
        f"{'lookout: daemon RSS after the screens, MB':<62} {full['rss_kb'] / 1024:12.1f} {empty['rss_kb'] / 1024:8.1f}"
    )
    print(
        f"{'lookout: daemon PSS after the screens, MB':<62} {full['pss_kb'] / 1024:12.1f} {empty['pss_kb'] / 1024:8.1f}"
    )
    print(f"{'lookout: daemon RSS once every exited screen was read, MB':<62} {full_asked_rss / 1024:12.1f}")
    verdict = "PASS" if ratio <= GOAL_RECOVERY_RATIO else "MISS"
    print(f"\ngoal: every screen within {GOAL_RECOVERY_RATIO}x of tmux's list and capture: {ratio:.2f}x "
          f"(with none: {empty_ratio:.2f}x) ..... {verdict}")  # fmt: skip
    memory_verdict = "PASS" if memory_ratio <= GOAL_EXITED_MEMORY_RATIO else "MISS"
    print(f"goal: the daemon's RSS with {args.exited} exited terminals within {GOAL_EXITED_MEMORY_RATIO}x of none: "
          f"{memory_ratio:.2f}x ..... {memory_verdict}")  # fmt: skip
    figures = {
        "bench": "terminal_cost_recovery",
        "sessions": args.sessions,
        "exited": args.exited,
        "runs": args.runs,
        "restart_to_running_s": round(full["running_s"], 3),
        "restart_to_every_screen_s": round(full["screens_s"], 3),
        "tmux_list_and_capture_s": round(full["tmux_s"], 3),
        "screens_vs_tmux": round(ratio, 2),
        "none_restart_to_every_screen_s": round(empty["screens_s"], 3),
        "none_tmux_list_and_capture_s": round(empty["tmux_s"], 3),
        "none_screens_vs_tmux": round(empty_ratio, 2),
        "daemon_rss_mb": round(full["rss_kb"] / 1024, 1),
        "daemon_pss_mb": round(full["pss_kb"] / 1024, 1),
        "none_daemon_rss_mb": round(empty["rss_kb"] / 1024, 1),
        "none_daemon_pss_mb": round(empty["pss_kb"] / 1024, 1),
        "daemon_rss_every_exited_read_mb": round(full_asked_rss / 1024, 1),
        "daemon_pss_every_exited_read_mb": round(full_asked_pss / 1024, 1),
        "exited_memory_vs_none": round(memory_ratio, 2),
        "goal_screens_within_1_5x_tmux": ratio <= GOAL_RECOVERY_RATIO,
        "goal_exited_memory_within_1_1x_none": memory_ratio <= GOAL_EXITED_MEMORY_RATIO,
    }
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=["open-end", "recovery"], default="open-end")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--end", choices=["kill", "delete"], default="kill")
    parser.add_argument("--exited", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.case == "recovery":
        recovery_case(args)
        return
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
