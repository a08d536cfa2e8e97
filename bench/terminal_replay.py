"""Terminal replay benchmark: the screen at any moment of a long journal, beside the live screen.

A terminal of the daemon (`lookout serve`, default engine) `cat`s a generated file of log- and build-like
lines with colours (`--size-mb`, default 1024: a 1 GB journal) through a 120x40 PTY. Then, alternating,
`GET /v1/terminals/{id}/screen?at=<offset>` at `--samples` random offsets (the same seeded ones every run)
and `GET /v1/terminals/{id}/screen` (the live screen, the same terminal) are timed end to end over HTTP; p50
and p99 of each, the most bytes a past screen replayed, and the goal: any moment in under 50 ms (p99).
Checkpoints are taken every 512 KB of output (lookout.terminal.screen.model.CHECKPOINT_BYTES), which bounds the
replay.

Run it from the repository root after `make test` (or `make bench`):

    .venv/bin/python bench/terminal_replay.py [--size-mb 1024] [--samples 200]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from terminal_ingest import COLS, MB, ROWS, WAIT_TIMEOUT_MS, Daemon, generate_input, percentile

GOAL_P99_MS = 50.0
SEED = 20261126


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=1024)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-replay-"))
        stack.callback(shutil.rmtree, workdir, True)
        path = workdir / "flood.txt"
        size = int(args.size_mb * MB)
        print(f"generating {size} bytes ...", file=sys.stderr, flush=True)
        generate_input(path, size)
        daemon = Daemon(workdir)
        stack.callback(daemon.stop)
        daemon.start()
        api = stack.enter_context(daemon.client(timeout=WAIT_TIMEOUT_MS / 1000 + 600))
        start = time.perf_counter()
        tid = api.post("/v1/terminals", json={"command": ["cat", str(path)], "cols": COLS, "rows": ROWS}).json()["id"]
        while api.get(f"/v1/terminals/{tid}").json()["status"] == "running":
            api.post(f"/v1/terminals/{tid}/wait", json={"until": {"exit": True}, "since": 0, "timeout_ms": 60_000})
        journal = api.get(f"/v1/terminals/{tid}").json()["raw_size"]
        print(f"journal of {journal} bytes written in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        rng = random.Random(SEED)
        offsets = [rng.randrange(journal + 1) for _ in range(args.samples)]
        past_ms, live_ms, replayed = [], [], []
        for offset in offsets:
            t0 = time.perf_counter()
            past = api.get(f"/v1/terminals/{tid}/screen", params={"at": offset})
            t1 = time.perf_counter()
            live = api.get(f"/v1/terminals/{tid}/screen")
            t2 = time.perf_counter()
            past.raise_for_status()
            live.raise_for_status()
            past_ms.append((t1 - t0) * 1000)
            live_ms.append((t2 - t1) * 1000)
            replayed.append(past.json()["at"]["replayed_bytes"])
    figures = {
        "bench": "terminal_replay",
        "journal_mb": round(journal / MB, 1),
        "samples": len(offsets),
        "screen_at_p50_ms": round(percentile(past_ms, 50), 2),
        "screen_at_p99_ms": round(percentile(past_ms, 99), 2),
        "live_screen_p50_ms": round(percentile(live_ms, 50), 2),
        "live_screen_p99_ms": round(percentile(live_ms, 99), 2),
        "max_replayed_bytes": max(replayed),
        "goal_screen_at_p99_lt_50ms": percentile(past_ms, 99) < GOAL_P99_MS,
    }
    print(f"\nterminal_replay: {figures['journal_mb']} MB journal, {len(offsets)} random moments, {COLS}x{ROWS}\n")
    print(f"{'GET /screen':<28} {'p50 ms':>8} {'p99 ms':>8}")
    print(f"{'?at=<random offset>':<28} {figures['screen_at_p50_ms']:8.2f} {figures['screen_at_p99_ms']:8.2f}")
    print(f"{'live (the same terminal)':<28} {figures['live_screen_p50_ms']:8.2f} {figures['live_screen_p99_ms']:8.2f}")
    print(f"most bytes replayed for one moment: {figures['max_replayed_bytes']}")
    verdict = "PASS" if figures["goal_screen_at_p99_lt_50ms"] else "MISS"
    print(f"\ngoal: any moment in under {GOAL_P99_MS:.0f} ms (p99) ..... {verdict}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
