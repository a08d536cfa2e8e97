"""Where a fresh read's time goes (docs/pages.md): for each changing page of bench/changing_pages.py and Python's
library/functions.html, on one tab in turns 0.25 s apart, Playwright's `aria_snapshot(mode="ai")`, the same with
boxes, the title and closed-root probe alone and lookout's fresh snapshot (kept answers dropped), with lookout's
round trip (`read_page`) and worker thread (`_observed`) timed inside it; then the Python part's CPU on the raw text
of the last read: the parse, the view, the ref set and the whole of `snapshot_text`. Medians; the load average
beside them (2 shared cores: wall figures move by a quarter between runs).

    .venv/bin/python bench/snapshot_split.py [--reads 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from browser_snapshot import VIEWPORT, serve  # noqa: E402
from changing_pages import SPACING_S, changing_pages  # noqa: E402

import lookout.browser.page as page_module  # noqa: E402
from lookout.browser import views  # noqa: E402
from lookout.browser.aria import parse, refs_in  # noqa: E402
from lookout.browser.browser import BrowserHost  # noqa: E402
from lookout.browser.closed_shadow import PROBE  # noqa: E402
from lookout.browser.registry import PageRegistry  # noqa: E402
from lookout.browser.snapshot_view import PageContext, SnapshotOptions, render  # noqa: E402
from lookout.core.events import EventBus  # noqa: E402
from lookout.core.gc_tuning import gc_paused  # noqa: E402
from lookout.core.tokens import count_tokens  # noqa: E402
from tests.support.real_pages import python_docs  # noqa: E402

inner: dict[str, list[float]] = {}


def _timed_calls() -> None:
    """Time lookout's round trip and worker thread inside its snapshot (wrappers around the module's names)."""
    read_page, observed = page_module.read_page, page_module._observed

    async def timed_read(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await read_page(*args, **kwargs)
        finally:
            inner.setdefault("round trip", []).append((time.perf_counter() - start) * 1000)

    def timed_observed(*args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return observed(*args, **kwargs)
        finally:
            inner.setdefault("thread", []).append((time.perf_counter() - start) * 1000)
            inner.setdefault("thread cpu", []).append((time.thread_time() - cpu) * 1000)

    page_module.read_page, page_module._observed = timed_read, timed_observed


def python_part(raw: str, rounds: int) -> dict[str, float]:
    """CPU ms (medians) of the parse, the view, the ref set and the whole `snapshot_text` of `raw`."""
    ctx, options = PageContext("http://127.0.0.1/", "Page", VIEWPORT), SnapshotOptions()
    parts: dict[str, list[float]] = {"parse": [], "view": [], "refs": [], "whole": []}
    for _ in range(rounds):
        with gc_paused():
            start = time.thread_time()
            root = parse(raw)
            parsed = time.thread_time()
            render(root, options, ctx)
            viewed = time.thread_time()
            refs_in(root)
            done = time.thread_time()
        views.forget_answers()
        whole = time.thread_time()
        views.snapshot_text(raw, options, ctx, None)
        spent = (parsed - start, viewed - parsed, done - viewed, time.thread_time() - whole)
        for key, value in zip(parts, spent, strict=True):
            parts[key].append(value * 1000)
    return {key: statistics.median(values) for key, values in parts.items()}


async def run(reads: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="lookout-split-"))
    for name, html in changing_pages().items():
        (folder / f"{name}.html").write_text(f"<!doctype html><html><body>{html}</body></html>")
    (pages_server, pages_url), (docs_server, docs_url) = serve(folder), serve(python_docs())
    urls = {name: f"{pages_url}/{name}.html" for name in changing_pages()}
    urls["functions.html"] = f"{docs_url}/library/functions.html"
    data = Path(tempfile.mkdtemp(prefix="lookout-split-data-"))
    registry = PageRegistry(data / "pages", BrowserHost(None), EventBus(), data / "uploads")
    _timed_calls()
    count_tokens("warm up")
    figures: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    try:
        ours = registry.get((await registry.create(None, VIEWPORT))["id"])
        page = ours.page

        def fresh() -> Awaitable[Any]:
            views.forget_answers()
            return ours.snapshot(SnapshotOptions())

        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "ai": lambda: page.aria_snapshot(mode="ai"), "boxes": lambda: page.aria_snapshot(mode="ai", boxes=True),
            "probe": lambda: page.evaluate(PROBE), "lookout": fresh}  # fmt: skip
        for name, url in urls.items():
            await page.goto(url)
            inner.clear()
            times: dict[str, list[float]] = {key: [] for key in calls}
            for _ in range(reads):
                for key, call in calls.items():
                    await asyncio.sleep(SPACING_S)
                    start = time.perf_counter()
                    await call()
                    times[key].append((time.perf_counter() - start) * 1000)
            raw = await page.aria_snapshot(mode="ai", boxes=True)
            figures[name] = {**{k: statistics.median(v) for k, v in (times | inner).items()},
                             "lines": raw.count("\n") + 1, **python_part(raw, reads)}  # fmt: skip
    finally:
        await registry.shutdown()
        pages_server.shutdown()
        docs_server.shutdown()
    figures["load_after"] = os.getloadavg()[0]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=8, help="reads of each kind on each page")
    figures = asyncio.run(run(parser.parse_args().reads))
    print(f"load average {figures['load_before']:.1f} before, {figures['load_after']:.1f} after; wall ms, then CPU ms")
    print(
        "page (lines) | ai | boxes | probe | lookout | its round trip | its thread | its CPU | parse | view | refs | whole"
    )
    for name, f in figures.items():
        if isinstance(f, dict):
            print(f"{name} ({f['lines']}) | " + " | ".join(f"{f[k]:.1f}" for k in (
                "ai", "boxes", "probe", "lookout", "round trip", "thread", "thread cpu", "parse", "view", "refs", "whole")))  # fmt: skip


if __name__ == "__main__":
    main()
