"""Fan-out benchmark: 20 WebSocket clients on one flooding terminal, latency from PTY write to receive.

A program in the terminal writes lines stamped with the time of writing (`T=<epoch> ...`, about 2,000
lines a second in bursts every 10 ms) for `--seconds`. Twenty clients follow the terminal over
`WS /v1/terminals/{id}/stream`, all in this process:

- `mode=deltas` (rate limited to 10 deltas a second per session): latency = time of receipt minus the
  newest stamp on the rows the delta carries (how stale the screen a client sees is);
- `mode=raw` (every byte, no rate limit): latency = time of receipt minus the oldest stamp in the message
  (how long the slowest byte of it took).

It prints p50, p99 and max for each mode, the goal (deltas p99 under 150 ms), and as the last line one JSON
object with the same figures. No peer is named for this measurement; the stamps and the clients share the
machine's clock. Run from the repository root after `make test`:

    .venv/bin/python bench/terminal_fanout.py [--clients 20] [--seconds 10]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import TOKEN, Daemon, create_terminal, percentile, wait_for

GOAL_P99_MS = 150.0
STAMP = re.compile(rb"T=(\d+\.\d+)")
FLOOD = """
import sys, time
end = time.time() + {seconds}
n = 0
while time.time() < end:
    for _ in range(20):
        sys.stdout.write("T=%.6f line %d %s\\n" % (time.time(), n, "x" * 50))
        n += 1
    sys.stdout.flush()
    time.sleep(0.01)
"""


async def follow(url: str, mode: str, seconds: float, latencies: list[float]) -> None:
    """One client: read for `seconds` after the first live message, recording latencies."""
    async with websockets.connect(url, max_size=None) as ws:
        await ws.recv()  # the hydration
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                message = await asyncio.wait_for(ws.recv(), max(0.05, deadline - time.monotonic()))
            except TimeoutError:
                break
            now = time.time()
            if mode == "raw" and isinstance(message, bytes):
                first = STAMP.search(message)
                if first:
                    latencies.append((now - float(first.group(1))) * 1000)
            elif mode == "deltas" and isinstance(message, str):
                delta = json.loads(message)
                stamps = [float(m.group(1)) for _, text in delta.get("changed", ()) if (m := STAMP.search(text.encode()))]
                if stamps:
                    latencies.append((now - max(stamps)) * 1000)


async def run_mode(daemon: Daemon, mode: str, clients: int, seconds: float) -> list[float]:
    with daemon.client() as api:
        terminal_id = create_terminal(api, [sys.executable, "-c", FLOOD.format(seconds=seconds + 2)])
        url = f"ws://127.0.0.1:{daemon.port}/v1/terminals/{terminal_id}/stream?mode={mode}&token={TOKEN}"
        latencies: list[float] = []
        await asyncio.gather(*(follow(url, mode, seconds, latencies) for _ in range(clients)))
        wait_for(api, terminal_id, {"exit": True})
        api.delete(f"/v1/terminals/{terminal_id}", params={"purge": "true"})
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    figures: dict[str, object] = {"bench": "terminal_fanout", "clients": args.clients, "seconds": args.seconds}
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-fanout-"))
        stack.callback(shutil.rmtree, workdir, True)
        daemon = Daemon(workdir, "avt")
        stack.callback(daemon.stop)
        daemon.start()
        print(f"terminal_fanout: {args.clients} clients, {args.seconds:.0f} s per mode\n")
        print(f"{'mode':<8} {'messages':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for mode in ("deltas", "raw"):
            lat = asyncio.run(run_mode(daemon, mode, args.clients, args.seconds))
            if not lat:
                raise SystemExit(f"no {mode} messages received")
            p50, p99 = percentile(lat, 50), percentile(lat, 99)
            print(f"{mode:<8} {len(lat):9d} {p50:8.1f} {p99:8.1f} {max(lat):8.1f}")
            figures.update({f"{mode}_messages": len(lat), f"{mode}_p50_ms": round(p50, 1),
                            f"{mode}_p99_ms": round(p99, 1), f"{mode}_max_ms": round(max(lat), 1),
                            f"{mode}_mean_ms": round(statistics.mean(lat), 1)})
    ok = figures["deltas_p99_ms"] < GOAL_P99_MS  # type: ignore[operator]
    figures["goal_deltas_p99_lt_150ms"] = ok
    print(f"\ngoal: deltas p99 < {GOAL_P99_MS:.0f} ms ..... {'PASS' if ok else 'MISS'} ({figures['deltas_p99_ms']} ms)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
