"""Load: many terminals, floods, WebSocket clients and a steady stream of API calls against one daemon.

200 terminal sessions (20 of them flooding: `seq` bursts in a loop, the rest idle bash shells), 50
WebSocket clients following raw streams (some of them of the floods), and a steady stream of API calls
(`act` on idle shells, `screen` reads, listings) for a set time, all against one `lookout serve` subprocess.
Reports p50/p99 latency of `act` and `screen`, the daemon's memory per idle session (RSS growth while the
idle shells were opened, divided by their number), its CPU use, and every error. Goals (issue 9): no error,
p99 of `screen` under 50 ms, memory per idle session under 5 MB. In `make soak` (10 minutes, twice); shorter
runs with `--minutes`. The last line of the output is one JSON object with the figures.

`--floods-in tmux` runs the same floods in a tmux server beside the daemon instead (lookout then holds only
the idle shells): the latencies of that run are what the floods alone cost a machine this size (the
kernel's terminal work, tmux), the floor under which lookout's own cannot go.

    .venv/bin/python bench/load.py [--minutes 10] [--sessions 200] [--floods 20] [--clients 50] [--floods-in tmux]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import TOKEN, Daemon, percentile
from tmux_server import TmuxServer

FLOOD = "while :; do seq 1 20000; sleep 0.2; done"


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Load:
    def __init__(self, url: str, minutes: float) -> None:
        self.url = url
        self.deadline = 0.0
        self.minutes = minutes
        self.latency: dict[str, list[float]] = {"act": [], "screen": [], "list": []}
        self.errors: list[str] = []

    async def timed(self, kind: str, call: Any) -> Any:
        start = time.perf_counter()
        try:
            response = await call
        except (httpx.HTTPError, OSError) as exc:
            self.errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            return None
        self.latency[kind].append((time.perf_counter() - start) * 1000)
        if response.status_code >= 400:
            self.errors.append(f"{kind}: HTTP {response.status_code}: {response.text[:200]}")
        return response

    async def agent(self, api: httpx.AsyncClient, shells: list[str], rng: random.Random) -> None:
        while time.monotonic() < self.deadline:
            tid = rng.choice(shells)
            roll = rng.random()
            if roll < 0.3:
                body = {"input": {"text": f"echo load-{rng.randrange(10**6)}", "keys": ["Enter"]},
                        "until": {"stable_ms": 100}, "timeout_ms": 5000}  # fmt: skip
                await self.timed("act", api.post(f"/v1/terminals/{tid}/act", json=body))
            elif roll < 0.9:
                await self.timed("screen", api.get(f"/v1/terminals/{tid}/screen", params={"compact": "true"}))
            else:
                await self.timed("list", api.get("/v1/terminals"))
            await asyncio.sleep(rng.uniform(0.02, 0.1))



async def follow(url: str, deadline: float, counts: dict[str, Any]) -> None:
    """One WebSocket client reading a raw stream until the deadline (reconnecting after a drop)."""
    while time.time() < deadline:
        try:
            async with websockets.connect(url, max_size=None) as ws:
                while time.time() < deadline:
                    message = await asyncio.wait_for(ws.recv(), timeout=max(0.1, deadline - time.time()))
                    counts["messages"] += 1
                    counts["bytes"] += len(message)
        except TimeoutError:
            return
        except (websockets.WebSocketException, OSError) as exc:
            counts["errors"].append(f"websocket: {type(exc).__name__}: {exc}")
            await asyncio.sleep(0.5)


def followers(urls: list[str], deadline: float, out: Any) -> None:
    """The WebSocket clients, in a process of their own: their reading must not delay the API callers'."""
    counts: dict[str, Any] = {"messages": 0, "bytes": 0, "errors": []}

    async def all_of_them() -> None:
        await asyncio.gather(*(follow(url, deadline, counts) for url in urls))

    asyncio.run(all_of_them())
    out.put(counts)


async def run(args: argparse.Namespace, daemon: Daemon) -> dict[str, Any]:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    headers = {"Authorization": f"Bearer {TOKEN}"}
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=daemon.url, headers=headers, timeout=30, limits=limits) as api:
        idle_count = args.sessions - args.floods
        before = rss_kb(pid)
        shells = []
        for _ in range(idle_count):
            r = await api.post("/v1/terminals", json={"command": ["bash", "--norc", "--noprofile"], "cols": 100, "rows": 30})
            r.raise_for_status()
            shells.append(r.json()["id"])
        await asyncio.sleep(2)
        per_idle_kb = (rss_kb(pid) - before) / idle_count
        floods = []
        for _ in range(args.floods if args.floods_in == "lookout" else 0):
            r = await api.post("/v1/terminals", json={"command": ["sh", "-c", FLOOD], "cols": 100, "rows": 30})
            r.raise_for_status()
            floods.append(r.json()["id"])
        load = Load(daemon.url, args.minutes)
        load.deadline = time.monotonic() + args.minutes * 60
        rng = random.Random(5)
        watched = (floods + rng.sample(shells, max(0, args.clients - len(floods))))[: args.clients]
        ws_base = daemon.url.replace("http://", "ws://")
        urls = [f"{ws_base}/v1/terminals/{tid}/stream?mode=raw&token={TOKEN}" for tid in watched]
        results: multiprocessing.Queue[dict[str, Any]] = multiprocessing.Queue()
        clients = multiprocessing.Process(target=followers, args=(urls, time.time() + args.minutes * 60, results))
        clients.start()
        cpu_start, wall_start = cpu_seconds(pid), time.monotonic()
        await asyncio.gather(*(load.agent(api, shells, random.Random(i)) for i in range(args.agents)))
        cpu = (cpu_seconds(pid) - cpu_start) / (time.monotonic() - wall_start)
        rss_end = rss_kb(pid)
        ws = await asyncio.to_thread(results.get, True, 120)
        clients.join(30)
        load.errors.extend(ws["errors"])
    return {
        "minutes": args.minutes, "sessions": args.sessions, "floods": args.floods, "floods_in": args.floods_in,
        "clients": args.clients,
        "agents": args.agents,
        "act_ms_p50": round(statistics.median(load.latency["act"]), 1) if load.latency["act"] else None,
        "act_ms_p99": round(percentile(load.latency["act"], 99), 1) if load.latency["act"] else None,
        "screen_ms_p50": round(statistics.median(load.latency["screen"]), 1) if load.latency["screen"] else None,
        "screen_ms_p99": round(percentile(load.latency["screen"], 99), 1) if load.latency["screen"] else None,
        "list_ms_p50": round(statistics.median(load.latency["list"]), 1) if load.latency["list"] else None,
        "list_ms_p99": round(percentile(load.latency["list"], 99), 1) if load.latency["list"] else None,
        "calls": {kind: len(values) for kind, values in load.latency.items()},
        "ws_messages": ws["messages"], "ws_mb": round(ws["bytes"] / 1e6, 1),
        "memory_per_idle_session_mb": round(per_idle_kb / 1024, 2), "daemon_rss_mb": round(rss_end / 1024, 1),
        "daemon_cpu_cores": round(cpu, 2), "errors": len(load.errors), "first_errors": load.errors[:5],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--floods", type=int, default=20)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--agents", type=int, default=8, help="concurrent API callers")
    parser.add_argument("--floods-in", choices=("lookout", "tmux"), default="lookout",
                        help="tmux: the floods run in a tmux server beside the daemon instead of in it, which "
                             "measures what the floods alone cost the machine (the floor of the latencies)")  # fmt: skip
    args = parser.parse_args()
    daemon = Daemon(Path(tempfile.mkdtemp(prefix="lookout-load-")), env={"LOOKOUT_MAX_SESSIONS": str(args.sessions + 10)})
    with TmuxServer("lookout-load") as tmux:
        if args.floods_in == "tmux":
            for i in range(args.floods):
                tmux("new-session" if i == 0 else "new-window", "-d", *(("-x", "100", "-y", "30") if i == 0 else ()),
                     f"sh -c '{FLOOD}'")  # fmt: skip
        daemon.start()
        try:
            figures = asyncio.run(run(args, daemon))
        finally:
            daemon.stop()
    goals = {"no_error": figures["errors"] == 0,
             "screen_p99_under_50ms": (figures["screen_ms_p99"] or 1e9) < 50,
             "idle_session_under_5mb": figures["memory_per_idle_session_mb"] < 5}  # fmt: skip
    print(f"\nLoad: {args.sessions} terminals ({args.floods} flooding, in {args.floods_in}), {args.clients} WebSocket "
          f"clients, {args.agents} API callers, {args.minutes:g} min")  # fmt: skip
    print(f"  act     p50 {figures['act_ms_p50']} ms   p99 {figures['act_ms_p99']} ms   ({figures['calls']['act']} calls)")
    print(f"  screen  p50 {figures['screen_ms_p50']} ms   p99 {figures['screen_ms_p99']} ms   "
          f"({figures['calls']['screen']} calls)   goal p99 < 50 ms: {'met' if goals['screen_p99_under_50ms'] else 'MISSED'}")  # fmt: skip
    print(f"  list    p50 {figures['list_ms_p50']} ms   p99 {figures['list_ms_p99']} ms   ({figures['calls']['list']} "
          "calls of GET /v1/terminals)")
    print(f"  memory per idle session {figures['memory_per_idle_session_mb']} MB (goal < 5 MB: "
          f"{'met' if goals['idle_session_under_5mb'] else 'MISSED'}); daemon RSS {figures['daemon_rss_mb']} MB")  # fmt: skip
    print(f"  daemon CPU {figures['daemon_cpu_cores']} cores; WebSocket {figures['ws_messages']} messages, {figures['ws_mb']} MB")
    print(f"  errors {figures['errors']} (goal 0: {'met' if goals['no_error'] else 'MISSED'}) {figures['first_errors']}")
    print(json.dumps({"bench": "load", **figures, "goals": goals}))


if __name__ == "__main__":
    main()
