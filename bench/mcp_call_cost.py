"""What the stdio MCP shim adds to a call: `terminal_list` through `lookout-mcp`, called with the official MCP
SDK client, beside the same REST call (`GET /v1/terminals`) from one kept HTTP client, in turns, against one
daemon with a few terminals open. Also beside them: the SDK's own round trip over the same stdio pipe (a
`ping`, which reaches no daemon: the floor any stdio MCP server pays), and the REST call made with a new HTTP
client each time (what the shim did before issue 47). The goal (issue 47): the shim adds at most 5 ms to
the REST call (median).

    .venv/bin/python bench/mcp_call_cost.py [--calls 200] [--terminals 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from terminal_ingest import TOKEN, Daemon

from tests.support.mcp_client import shim

GOAL_ADDED_MS = 5.0
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    began = time.perf_counter()
    await work()
    return (time.perf_counter() - began) * 1000


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median_ms": round(statistics.median(ordered), 2), "p90_ms": round(ordered[int(len(ordered) * 0.9)], 2)}


async def measure(url: str, calls: int) -> dict[str, dict[str, float]]:
    times: dict[str, list[float]] = {"shim terminal_list": [], "sdk ping (stdio floor)": [],
                                     "rest GET /v1/terminals": [], "rest, new client per call": []}  # fmt: skip

    async def fresh_client() -> None:
        async with httpx.AsyncClient(base_url=url, headers=AUTH) as client:
            (await client.get("/v1/terminals")).raise_for_status()

    async with shim(LOOKOUT_URL=url, LOOKOUT_TOKEN=TOKEN) as session, httpx.AsyncClient(base_url=url, headers=AUTH) as kept:

        async def rest() -> None:
            (await kept.get("/v1/terminals")).raise_for_status()

        async def tool() -> None:
            result = await session.call_tool("terminal_list", {})
            if result.is_error:
                raise RuntimeError(str(result.content))

        work = {"shim terminal_list": tool, "sdk ping (stdio floor)": session.send_ping,
                "rest GET /v1/terminals": rest, "rest, new client per call": fresh_client}  # fmt: skip
        for _ in range(max(10, calls // 10)):  # warm up: imports, first connections
            for name, call in work.items():
                await call()
        for _ in range(calls):
            for name, call in work.items():
                times[name].append(await timed(call))
    return {name: summary(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--terminals", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lookout-mcp-cost-") as workdir:
        daemon = Daemon(Path(workdir))
        daemon.start()
        try:
            with daemon.client() as api:
                for _ in range(args.terminals):
                    api.post("/v1/terminals", json={"command": ["sleep", "600"]}).raise_for_status()
            figures = asyncio.run(measure(daemon.url, args.calls))
        finally:
            daemon.stop()
    added = round(figures["shim terminal_list"]["median_ms"] - figures["rest GET /v1/terminals"]["median_ms"], 2)
    print(f"{'call':<28} {'median ms':>10} {'p90 ms':>8}   ({args.calls} calls each, in turns)")
    for name, figure in figures.items():
        print(f"{name:<28} {figure['median_ms']:>10.2f} {figure['p90_ms']:>8.2f}")
    print(f"the shim adds {added:.2f} ms to the REST call (goal: at most {GOAL_ADDED_MS:g} ms)")
    print(json.dumps({"bench": "mcp_call_cost", "calls": args.calls, **{k: v for k, v in figures.items()},
                      "shim_added_ms": added, "goal_added_ms": GOAL_ADDED_MS}))  # fmt: skip


if __name__ == "__main__":
    main()
