"""Timeline rendering benchmark: a long recorded history rendered into an 8,000-token budget.

Histories of 1,000, 10,000 and 100,000 frames are recorded through `Timeline.record` (the daemon's own
path: diffs, exact token counts, append, checkpoints) from a mix like an agent session's: terminal input,
commands (one in eight failing), 80x24 screens that change a few rows at a time, page snapshots of about
600 tokens, device UI trees and actions. Side by side, in one run, for each length:

- lookout: `Timeline.context(budget=8000)`: median and p90 time over repeated renders, the rendered tokens
  and their ratio to the raw history (every frame in full), and the time of a first render after a
  restart (checkpoints loaded, then the frames after the last one);
- the seed's design (connectome-ts, seed 002), which renders every frame and only warns about the budget:
  every frame's full text concatenated, then cut to the budget from the front, as a caller has to;
- observation masking (SWE-agent's approach): every action kept, observations but the last 5 replaced by
  one line, then cut to the budget from the front.

The goal (issue 7): under 50 ms for 10,000 frames, and a render time that does not grow with the length of
history. The last line of the output is one JSON object with the figures.

    .venv/bin/python bench/timeline_render.py [--sizes 1000,10000,100000] [--runs 15]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import REPO, percentile, timed

sys.path.insert(0, str(REPO))

from lookout.core.tokens import count_tokens, warm_up
from lookout.timeline.recording import FrameInput
from lookout.timeline.timeline import Timeline

BUDGET = 8000
WORDS = ["build", "test", "deploy", "cache", "index", "query", "render", "parse", "fetch", "store", "merge", "branch", "commit", "worker"]


def history(n: int, seed: int = 3) -> list[FrameInput]:
    """n frames of a plausible session over two terminals, a page and a device."""
    rng = random.Random(seed)
    rows = [f"{' '.join(rng.choices(WORDS, k=6))} {i}" for i in range(24)]
    page = [f'- link "{" ".join(rng.choices(WORDS, k=3))}" [ref=e{i}]' for i in range(120)]
    frames: list[FrameInput] = []
    step = 0
    while len(frames) < n:
        step += 1
        term = f"terminal:t{step % 2}"
        command = f"make {rng.choice(WORDS)} -j{step % 8}"
        frames.append(FrameInput(term, "action", "terminal input", f"typed `{command}⏎`", f"typed `{command}⏎`",
                                 data={"action": command}))  # fmt: skip
        code = 2 if step % 8 == 0 else 0
        line = f"`{command}` exited {code} in /src/app"
        frames.append(FrameInput(term, "event", "command", line + ("\nerror: undefined symbol" if code else ""),
                                 line, pinned=bool(code), data={"command": command, "exit_code": code,
                                 "cwd": "/src/app", "tail": "error: undefined symbol" if code else ""}))  # fmt: skip
        for _ in range(3):
            rows[rng.randrange(24)] = f"{' '.join(rng.choices(WORDS, k=7))} {step}"
        frames.append(FrameInput(term, "observation", "terminal screen", "screen 80x24:\n" + "\n".join(rows),
                                 f"screen 80x24: `{rows[-1]}`", subject="screen"))  # fmt: skip
        if step % 4 == 0:
            page[rng.randrange(len(page))] = f'- button "{rng.choice(WORDS)} {step}" [ref=e{step}]'
            url = f"http://127.0.0.1:8000/{rng.choice(WORDS)}"
            frames.append(FrameInput("page:p1", "action", "page action", f"click e{step} at {url}",
                                     f"click e{step}", data={"url": url, "action": f"click e{step}"}))  # fmt: skip
            frames.append(FrameInput("page:p1", "observation", "page snapshot", "\n".join(page),
                                     f"snapshot of {url}", subject="snapshot", data={"url": url}))  # fmt: skip
        if step % 6 == 0:
            ui = "\n".join(f'{{"index":{i},"class":"TextView","text":"{rng.choice(WORDS)}"}}' for i in range(20))
            frames.append(FrameInput("device:emu", "action", "device action", "tapped element 3", "tapped element 3",
                                     data={"action": "tap 3"}))  # fmt: skip
            frames.append(FrameInput("device:emu", "observation", "device UI tree", f"UI of com.app:\n{ui}",
                                     "UI of com.app: 20 elements", subject="ui", data={"app": "com.app"}))  # fmt: skip
    return frames[:n]


def cut_to_budget(texts: list[str], budget: int) -> tuple[int, int]:
    """Keep the newest texts that fit (counting every one, as a caller of a renderer without a budget
    must); returns (tokens kept, texts kept)."""
    kept = 0
    counts = [count_tokens(t) for t in texts]
    total = 0
    for tokens in reversed(counts):
        if total + tokens > budget:
            break
        total += tokens
        kept += 1
    return total, kept


def peers(timeline: Timeline) -> dict[str, Any]:
    store = timeline.store
    frames = [store.read(seq) for seq in range(1, store.last_seq + 1)]

    def seed() -> tuple[int, int]:
        return cut_to_budget([f["levels"]["full"]["text"] for f in frames], BUDGET)

    def masking() -> tuple[int, int]:
        observations = [i for i, f in enumerate(frames) if f["kind"] == "observation"]
        recent = set(observations[-5:])
        texts = [f["levels"]["full"]["text"] if f["kind"] != "observation" or i in recent
                 else f"[#{f['seq']}] (observation omitted)" for i, f in enumerate(frames)]  # fmt: skip
        return cut_to_budget(texts, BUDGET)

    out = {}
    for name, fn in (("seed", seed), ("masking", masking)):
        times, (tokens, kept) = timed(fn, 1)
        out[name] = {"ms": round(times[0], 1), "tokens": tokens, "frames_kept": kept}
    return out


def measure(n: int, runs: int, with_peers: bool) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="lookout-timeline-bench-"))
    timeline = Timeline(directory)
    start = time.perf_counter()
    for frame in history(n):
        timeline.record(frame)
    timeline.sync(timeout_s=3600)
    record_s = time.perf_counter() - start
    raw = sum(m.full_tokens for m in timeline.store.metas)
    times, result = timed(lambda: timeline.context(BUDGET, None, None), runs)
    filtered, _ = timed(lambda: timeline.context(BUDGET, None, "terminal:t1"), runs)
    figures: dict[str, Any] = {
        "frames": n,
        "record_frames_per_s": round(n / record_s),
        "raw_tokens": raw,
        "render_ms_median": round(statistics.median(times), 2),
        "render_ms_p90": round(percentile(times, 90), 2),
        "render_one_resource_ms_median": round(statistics.median(filtered), 2),
        "rendered_tokens": result["metadata"]["total_tokens"],
        "ratio": round(result["metadata"]["total_tokens"] / raw, 5),
        "messages": len(result["messages"]),
    }
    if with_peers:
        figures["peers"] = peers(timeline)
    timeline.close()
    start = time.perf_counter()
    again = Timeline(directory)
    loaded = time.perf_counter() - start
    cold, _ = timed(lambda: again.context(BUDGET, None, None), 1)
    figures["restart_load_ms"] = round(loaded * 1000, 1)
    figures["first_render_after_restart_ms"] = round(cold[0], 2)
    again.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    warm_up()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"recording {n} frames ...", file=sys.stderr, flush=True)
        rows.append(measure(n, args.runs, with_peers=n <= 10_000))
    print(f"\nTimeline render into {BUDGET} tokens (lookout vs the seed's render-everything and SWE-agent-style masking)")
    print(f"{'frames':>8} {'record/s':>9} {'raw tokens':>11} {'render ms':>10} {'p90':>7} {'1 res ms':>9} "
          f"{'tokens':>7} {'ratio':>8} {'restart ms':>11} {'seed ms':>8} {'mask ms':>8}")  # fmt: skip
    for r in rows:
        p = r.get("peers", {})
        seed = f"{p['seed']['ms']:.1f}" if p else "-"
        mask = f"{p['masking']['ms']:.1f}" if p else "-"
        print(f"{r['frames']:>8} {r['record_frames_per_s']:>9} {r['raw_tokens']:>11} {r['render_ms_median']:>10} "
              f"{r['render_ms_p90']:>7} {r['render_one_resource_ms_median']:>9} {r['rendered_tokens']:>7} "
              f"{r['ratio']:>8} {r['restart_load_ms']:>11} {seed:>8} {mask:>8}")  # fmt: skip
    by_size = {r["frames"]: r for r in rows}
    goal: dict[str, Any] = {}
    if 10_000 in by_size:
        goal["under_50ms_at_10000"] = by_size[10_000]["render_ms_median"] < 50
        print("goal: under 50 ms at 10,000 frames:", "met" if goal["under_50ms_at_10000"] else "MISSED")
    if 10_000 in by_size and 100_000 in by_size:
        goal["growth_10k_to_100k"] = round(by_size[100_000]["render_ms_median"] / by_size[10_000]["render_ms_median"], 2)
        print(f"goal: time that does not grow: 100,000 frames take {goal['growth_10k_to_100k']}x the time of 10,000")
    print(json.dumps({"bench": "timeline_render", "budget": BUDGET, "rows": rows, "goal": goal}))


if __name__ == "__main__":
    main()
