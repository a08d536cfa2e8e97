"""Standby recovery benchmark: how soon the terminals are back after `kill -9` of a daemon that
`lookout supervise --standby` runs (a second daemon, kept ready, takes over), beside tmux's new client.

`--sessions` busy terminals (default 100, each printing a line every 20 ms) under the supervised daemon, with
`--exited` terminals (default 500) whose programs have ended in its data dir, and as many busy tmux panes
running the same program. The daemon that serves is killed (`kill -9`, the daemon alone)
`--runs` times (default 5); each run is timed from the kill until `GET /v1/terminals?status=running` (the
running ones, as tmux lists the panes that live) lists every busy one running, served by the standby, and each
one's screen was answered (one after the other). A run waits until
the next standby is ready and the daemon has served 30 s (one that dies sooner after another did is a crash
loop, which gets no standby). Beside it, in the same run, tmux (whose server was never killed): a new client's
`tmux list-panes -a`, then a `capture-pane -p` of each. While one side is timed, the other side's programs are
stopped. And what the standby costs: its memory (RSS, PSS) while it waits, beside the serving daemon's; and what
following the busy programs costs, which a take-over competes with for the CPU: the CPU time a second of the
serving daemon and of the holders together, beside tmux's server (each measured for FOLLOWED_S with the other
side's programs stopped). The goal (issue 47): every screen within 1.5x of tmux's list and capture (the medians'
ratio; the median of each run's own ratio, both sides measured one after the other, is printed beside it).

    .venv/bin/python bench/standby_recovery.py [--sessions 100] [--exited 500] [--runs 5]   (LOOKOUT_BENCH_KEEP=1 keeps its data dir and log)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_cost import _in_parallel, beside_tmux, made_exited, memory_kb, parent, stopped
from terminal_ingest import REPO, TOKEN, _free_port
from terminal_restart import BUSY_ARGV
from tmux_server import TmuxServer

from lookout.daemon.lock import lock_holder
from lookout.daemon.supervisor import STABLE_S

GOAL_RATIO = 1.5
FOLLOWED_S = 10.0
"""How long the CPU that following the busy programs costs is measured, each side."""


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Supervised:
    """`lookout supervise --standby` on a free port with its own data dir; its output goes to `log`."""

    def __init__(self, workdir: Path, sessions: int) -> None:
        self.data, self.log, self.port = workdir / "data", workdir / "supervise.log", _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "LOOKOUT_TOKEN": TOKEN, "LOOKOUT_MAX_SESSIONS": str(sessions + 10),
               "LOOKOUT_RETAIN_EXITED_COUNT": "0"}  # fmt: skip
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "lookout", "supervise", "--standby", "--port",
                                          str(self.port), "--data-dir", str(self.data)], cwd=REPO, env=env,
                                         stdout=log, stderr=subprocess.STDOUT)  # fmt: skip

    def ready_standby(self, number: int, timeout: float = 300) -> int:
        """The pid of the `number`th standby (1-based), once it says it is ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            started = re.findall(r"started a standby \(pid (\d+)\)", text)
            if len(started) >= number and f"standby: this daemon (pid {started[number - 1]}) is ready" in text:
                return int(started[number - 1])
            time.sleep(0.05)
        raise RuntimeError(f"standby {number} was not ready:\n{self.log.read_text(errors='replace')[-3000:]}")

    def end(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(self.data)], cwd=REPO,
                       capture_output=True, timeout=300, check=False)  # fmt: skip


def _listing(api: httpx.Client) -> list[dict[str, object]] | None:
    """The running terminals listed, or None while nobody answers."""
    try:
        answer = api.get("/v1/terminals", params={"status": "running"})
    except httpx.TransportError:  # (among them the connection the killed daemon had kept open)
        return None
    return answer.json()["terminals"] if answer.status_code == 200 else None


def _programs(api: httpx.Client, busy: list[str]) -> list[int]:
    """The pids of the busy terminals' programs."""
    return [t["pid"] for t in api.get("/v1/terminals").json()["terminals"] if t["id"] in busy]


def taken_over(supervised: Supervised, ids: list[str], standby: int) -> tuple[float, float]:
    """Kill the serving daemon; seconds until every busy terminal is listed running by the standby, and until
    every screen was answered. The client is made before the kill, as an agent's is (making one costs httpx
    16-29 ms, its TLS context, which an http:// URL never uses); it connects again as the daemon died."""
    served, busy = lock_holder(supervised.data), set(ids)
    assert served is not None
    with httpx.Client(base_url=supervised.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as api:
        api.get("/healthz").raise_for_status()
        os.kill(served, signal.SIGKILL)
        start = time.perf_counter()
        while True:
            listed = _listing(api)
            if listed is not None and sum(t["status"] == "running" for t in listed if t["id"] in busy) >= len(ids):
                running = time.perf_counter() - start
                break
            time.sleep(0.005)
        for tid in ids:
            api.get(f"/v1/terminals/{tid}/screen").raise_for_status()
        screens = time.perf_counter() - start
        if api.get("/healthz").json()["pid"] != standby:
            raise RuntimeError("the terminals were not served by the standby")
    return running, screens


def cpu_s(pids: list[int]) -> float:
    """The CPU time (user and system, seconds) the processes `pids` have used."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def following_cpu(groups: list[list[int]], stopped_meanwhile: list[int]) -> list[float]:
    """The CPU each group of processes uses a second (cores) over FOLLOWED_S, with `stopped_meanwhile` stopped."""
    with stopped(stopped_meanwhile):
        before, start = [cpu_s(pids) for pids in groups], time.perf_counter()
        time.sleep(FOLLOWED_S)
        elapsed = time.perf_counter() - start
        return [(cpu_s(pids) - used) / elapsed for pids, used in zip(groups, before, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--exited", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "lookout"], cwd=REPO, check=True)
    runnings, screens, tmuxes = [], [], []
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-standby-"))
        if not os.environ.get("LOOKOUT_BENCH_KEEP"):
            stack.callback(shutil.rmtree, workdir, True)
        supervised = Supervised(workdir, args.sessions)
        stack.callback(supervised.end)
        standby = supervised.ready_standby(1)
        _progress(f"{args.exited} terminals that end ...")
        made_exited(supervised.url, args.exited)
        _progress(f"{args.sessions} busy terminals and {args.sessions} busy tmux sessions ...")
        busy = [t["id"] for t in asyncio.run(_in_parallel(supervised.url, [
            ("POST", "/v1/terminals", {"command": BUSY_ARGV, "cols": 80, "rows": 24})] * args.sessions, 4))]  # fmt: skip
        tmux = stack.enter_context(TmuxServer("bench-standby"))
        for i in range(args.sessions):
            tmux("new-session", "-d", "-s", f"s{i}", "-x", "80", "-y", "24", *BUSY_ARGV)
        panes = [int(tmux("display", "-p", "#{pid}"))] + [
            int(pid) for pid in tmux("list-panes", "-a", "-F", "#{pane_pid}").split()
        ]
        served = lock_holder(supervised.data)
        assert served is not None
        standby_rss, standby_pss = memory_kb(standby)
        served_rss, served_pss = memory_kb(served)
        with httpx.Client(base_url=supervised.url, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
            programs = _programs(api, busy)
        _progress(f"what following them costs, {FOLLOWED_S:.0f} s each side ...")
        holders = [parent(pid) for pid in programs]
        daemon_cpu, holders_cpu = following_cpu([[served], holders], panes)
        (tmux_cpu,) = following_cpu([panes[:1]], programs)
        served_since = time.monotonic()
        for run in range(1, args.runs + 1):
            standby = supervised.ready_standby(run)
            time.sleep(max(2.0, STABLE_S + 1 - (time.monotonic() - served_since)) if run > 1 else 2.0)
            with httpx.Client(base_url=supervised.url, headers={"Authorization": f"Bearer {TOKEN}"}) as api:
                programs = _programs(api, busy)
            running, screened, tmux_s = beside_tmux(partial(taken_over, supervised, busy, standby), panes, programs,
                                                    tmux, len(busy), f"run {run}/{args.runs}")  # fmt: skip
            served_since = time.monotonic()
            runnings.append(running)
            screens.append(screened)
            tmuxes.append(tmux_s)
    running, screened, tmux_s = statistics.median(runnings), statistics.median(screens), statistics.median(tmuxes)
    ratio = screened / tmux_s
    paired = statistics.median(mine / theirs for mine, theirs in zip(screens, tmuxes, strict=True))
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"\nstandby_recovery: {args.sessions} busy terminals and {args.exited} exited, kill -9 of the daemon under "
          f"`lookout supervise --standby`, median of {args.runs} runs\n")  # fmt: skip
    print(f"{'what':<62} {'value':>10}")
    print(f"{'lookout: from the kill until all are listed running, s':<62} {running:10.3f}")
    print(f"{'lookout: from the kill until every screen was answered, s':<62} {screened:10.3f}")
    print(f"{version + ': list-panes -a and capture-pane of each, s':<62} {tmux_s:10.3f}")
    print(
        f"{'lookout: the standby while it waits, RSS / PSS MB':<62} {standby_rss / 1024:5.1f} / {standby_pss / 1024:.1f}"
    )
    print(f"{'lookout: the serving daemon, RSS / PSS MB':<62} {served_rss / 1024:5.1f} / {served_pss / 1024:.1f}")
    print(f"{'lookout: following them, CPU cores: the daemon / the holders':<62} {daemon_cpu:5.2f} / {holders_cpu:.2f}")
    print(f"{version + ': following them, CPU cores: its server':<62} {tmux_cpu:10.2f}")
    print(f"{'every screen beside tmux: the median of the ratios of the runs':<62} {paired:9.2f}x")
    verdict = "PASS" if ratio <= GOAL_RATIO else "MISS"
    print(f"\ngoal: every screen within {GOAL_RATIO}x of tmux's list and capture: {ratio:.2f}x ..... {verdict}")
    print(json.dumps({
        "bench": "standby_recovery", "sessions": args.sessions, "exited": args.exited, "runs": args.runs,
        "kill_to_running_s": round(running, 3), "kill_to_every_screen_s": round(screened, 3),
        "tmux_list_and_capture_s": round(tmux_s, 3), "screens_vs_tmux": round(ratio, 2),
        "screens_vs_tmux_runs_median": round(paired, 2),
        "standby_rss_mb": round(standby_rss / 1024, 1), "standby_pss_mb": round(standby_pss / 1024, 1),
        "serving_daemon_rss_mb": round(served_rss / 1024, 1), "following_cpu_daemon": round(daemon_cpu, 2),
        "following_cpu_holders": round(holders_cpu, 2), "following_cpu_tmux_server": round(tmux_cpu, 2),
        "goal_screens_within_1_5x_tmux": ratio <= GOAL_RATIO,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
