"""User patterns: google-re2 against the `regex` module, side by side, on the hostile patterns of issue 16.

Each case runs in a fresh child process with an address-space limit (`--mem-mb`, default 2048) and a
wall-clock limit (`--limit-s`, default 20): a pattern that would take the machine's memory ends there with
"MemoryError" or "killed", not in the daemon. Printed per case and engine: compile time, search time (or
the error), the child's peak RSS. Then how a search in a worker thread shares the interpreter: the time a
counting loop in the main thread loses while a thread searches (the GIL held or not).

    .venv/bin/python bench/patterns.py [--mem-mb 2048] [--limit-s 20]

lookout depends on google-re2 only; the comparison needs the `regex` module too (`pip install regex`).

The last line of the output is one JSON object with the figures.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import random
import resource
import threading
import time
from typing import Any

HOSTILE_LINE = "a" * 5000 + "b"
SHUFFLED = "".join(random.Random(1).choice("ab\n") for _ in range(200_000))
LOG = "".join(f"line {i}: build step {i % 97} ok\n" for i in range(200_000))  # ~5.6 MB of ordinary output
CASES: list[tuple[str, str, str]] = [
    ("nested counted repeats x3", "((a{1000}){1000}){1000}", "a" * 100),
    ("nested counted repeats x2", "(a{1000}){1000}", "a" * 100),
    ("catastrophic backtracking", "(a+)+$", HOSTILE_LINE),
    ("counted repeat after any char, 200 KB (DFA gives up)", "(?s)a.{999}c", SHUFFLED),
    ("ordinary wait pattern on 5.6 MB", r"(?m)^line 199999: build step \d+ (ok|failed)$", LOG),
    ("backreference", r"(\w+) \1", "hello hello"),
]


def _child(engine: str, pattern: str, text: str, mem_mb: int, out: Any) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
    result: dict[str, Any] = {}
    try:
        t0 = time.perf_counter()
        if engine == "re2":
            import re2

            options = re2.Options()
            options.max_mem = 8 << 20
            options.log_errors = False
            compiled: Any = re2.compile(pattern, options)
        else:
            import regex

            compiled = regex.compile(pattern, regex.VERSION0)
        result["compile_s"] = round(time.perf_counter() - t0, 4)
        t0 = time.perf_counter()
        match = compiled.search(text) if engine == "re2" else compiled.search(text, timeout=0.25, concurrent=True)
        result["search_s"] = round(time.perf_counter() - t0, 4)
        result["matched"] = match is not None
    except MemoryError:
        result["error"] = "MemoryError"
    except Exception as exc:  # noqa: BLE001 - the engine's own error, reported as such
        result["error"] = f"{type(exc).__name__}: {str(exc)[:60]}"
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    out.put(result)


def run_case(engine: str, pattern: str, text: str, mem_mb: int, limit_s: float) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    out: Any = ctx.Queue()
    proc = ctx.Process(target=_child, args=(engine, pattern, text, mem_mb, out))
    t0 = time.perf_counter()
    proc.start()
    proc.join(limit_s)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return {"error": f"still running after {limit_s} s: killed"}
    try:
        result = out.get(timeout=1)
    except queue.Empty:
        result = {"error": f"child died (exit {proc.exitcode})"}
    result["wall_s"] = round(time.perf_counter() - t0, 3)
    return result


def gil_share(engine: str) -> float:
    """The fraction of a main-thread counting loop's speed kept while a thread searches a long text."""
    if engine == "re2":
        import re2

        compiled: Any = re2.compile(r"(?s)a.{200}c")
        def search():
            return compiled.search("ab\n" * 200_000)
    else:
        import regex

        compiled = regex.compile(r"(?s)a.{200}c")
        def search():
            return compiled.search("ab\n" * 200_000, concurrent=True)

    def count(seconds: float) -> int:
        n, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            n += 1
        return n

    alone = count(0.5)
    worker = threading.Thread(target=lambda: [search() for _ in range(50)], daemon=True)
    worker.start()
    shared = count(0.5)
    worker.join()
    return round(shared / alone, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mem-mb", type=int, default=2048)
    parser.add_argument("--limit-s", type=float, default=20.0)
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    print(f"{'case':52} {'engine':6} {'compile s':>10} {'search s':>9} {'peak MB':>8}  result")
    for name, pattern, text in CASES:
        for engine in ("re2", "regex"):
            r = run_case(engine, pattern, text, args.mem_mb, args.limit_s)
            figures[f"{name} / {engine}"] = r
            outcome = r.get("error") or ("match" if r.get("matched") else "no match")
            print(
                f"{name:52} {engine:6} {r.get('compile_s', '-')!s:>10} {r.get('search_s', '-')!s:>9} "
                f"{r.get('peak_rss_mb', '-')!s:>8}  {outcome}"
            )
    for engine in ("re2", "regex"):
        share = gil_share(engine)
        figures[f"main thread speed while a thread searches / {engine}"] = share
        print(f"main thread keeps {share:.0%} of its speed while a thread searches with {engine}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
