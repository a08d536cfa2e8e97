"""Health under a flood of WebSocket streams (issue 46): how long `/healthz` takes while 2,000 raw WebSocket
stream handshakes on one terminal arrive at once, against `LOOKOUT_MAX_STREAMS=100`.

The flood runs in a process of its own (the `websockets` client, 2,000 connections at once); this process
asks `/healthz` on a new connection every 100 ms until the flood has ended, each with a 30 s timeout, and
prints its latencies (median, p90, max), what the streams got (accepted, refused with 503, 408, other) and
how long the flood took. The goal (issue 46): every `/healthz` within about a second.

    .venv/bin/python bench/stream_flood.py [--streams 2000] [--limit 100]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import REPO, TOKEN, Daemon

FLOOD = r"""
import asyncio, collections, json, sys, time
import websockets
from websockets.exceptions import InvalidStatus

url, count = sys.argv[1], int(sys.argv[2])

async def main():
    opened, seen = [], collections.Counter()
    async def one():
        try:
            ws = await websockets.connect(url, open_timeout=120)
        except InvalidStatus as exc:
            seen[str(exc.response.status_code)] += 1
            return
        except Exception as exc:
            seen[type(exc).__name__] += 1
            return
        seen["accepted"] += 1
        opened.append(ws)
    started = time.monotonic()
    await asyncio.gather(*(one() for _ in range(count)))
    took = time.monotonic() - started
    await asyncio.gather(*(ws.close() for ws in opened))
    print(json.dumps({"seen": seen, "took_s": round(took, 2)}), flush=True)

asyncio.run(main())
"""


def _healthz(port: int) -> float:
    """Seconds until `/healthz` answered 200 on a new connection (inf on anything else)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = sock.recv(64)
    except OSError:
        return float("inf")
    return time.monotonic() - started if answer.startswith(b"HTTP/1.1 200") else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        daemon = Daemon(Path(tmp), env={"LOOKOUT_MAX_STREAMS": str(args.limit)})
        daemon.start()
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            body = {"command": ["cat"], "shell_integration": False}
            tid = httpx.post(f"{daemon.url}/v1/terminals", json=body, headers=headers, timeout=30).json()["id"]
            url = f"ws://127.0.0.1:{daemon.port}/v1/terminals/{tid}/stream?mode=raw&token={TOKEN}"
            flood = subprocess.Popen([sys.executable, "-c", FLOOD, url, str(args.streams)], cwd=REPO,
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip
            latencies = []
            while flood.poll() is None:
                latencies.append(_healthz(daemon.port))
                time.sleep(0.1)
            assert flood.stdout is not None
            result = json.loads(flood.stdout.read())
        finally:
            daemon.stop()
    done = sorted(latencies)
    print(f"{args.streams} streams against a limit of {args.limit}: {dict(result['seen'])}, "
          f"the flood took {result['took_s']} s")  # fmt: skip
    print(f"/healthz x {len(done)} during it: median {statistics.median(done) * 1000:.0f} ms, "
          f"p90 {done[int(len(done) * 0.9)] * 1000:.0f} ms, max {done[-1] * 1000:.0f} ms, "
          f"over 1 s: {sum(t > 1 for t in done)}")  # fmt: skip
    print(json.dumps({"bench": "stream_flood", "streams": args.streams, "limit": args.limit, **result["seen"],
                      "flood_s": result["took_s"], "healthz_asked": len(done),
                      "healthz_median_ms": round(statistics.median(done) * 1000, 1),
                      "healthz_max_ms": round(done[-1] * 1000, 1), "healthz_over_1s": sum(t > 1 for t in done)}))  # fmt: skip


if __name__ == "__main__":
    main()
