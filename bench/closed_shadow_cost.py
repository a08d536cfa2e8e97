"""What reading closed shadow roots adds to a page read, beside Playwright's `aria_snapshot(mode="ai")`.

On the same tab, alternating within each round so that a shared machine's load weighs on all alike:
- `peer`: Playwright's `page.aria_snapshot(mode="ai")`;
- `before`: the read lookout made before closed roots were read (`aria_snapshot(mode="ai", boxes=True)` beside
  `page.title()`);
- `now`: lookout's read now (`lookout.browser.page.read_page`: the same, with the title and the count of closed
  roots in one evaluate, and the CDP read of the closed roots only when the count is above zero);
- `title` and `probe`: `page.title()` (what read the title before) and the evaluate that reads the title and the
  count now, alone: the whole difference on a page without closed roots.
Pages: Python's documentation as Debian ships it (no closed roots) and a generated page with `--hosts` custom
elements, each with a closed root holding a form (the CDP read's cost). Medians of `--repeat` rounds; the last
line is one JSON object with the figures.

    .venv/bin/python bench/closed_shadow_cost.py [--repeat 15] [--hosts 20]
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
import orjson  # noqa: E402

from lookout.browser.browser import BrowserHost  # noqa: E402
from lookout.browser.closed_shadow import PROBE  # noqa: E402
from lookout.browser.page import read_page  # noqa: E402
from lookout.browser.registry import PageRegistry  # noqa: E402
from lookout.core.events import EventBus  # noqa: E402
from tests.support.real_pages import python_docs  # noqa: E402
from tests.support.site import serve_directory  # noqa: E402

DOC_PAGES = ("tutorial/controlflow.html", "library/stdtypes.html")


def closed_hosts_page(hosts: int) -> str:
    card = ("<label>Email <input></label><label><input type=checkbox> Agree</label>"
            "<select aria-label=Size><option>S</option><option>L</option></select><button>Save</button>")  # fmt: skip
    return ("<!doctype html><title>Cards</title><h1>Cards</h1>" + "<x-card></x-card>" * hosts
            + "<script>customElements.define('x-card', class extends HTMLElement { constructor() { super();"
            + f" this.attachShadow({{mode: 'closed'}}).innerHTML = {card!r}; }} }});</script>")  # fmt: skip


async def _ms(call: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await call()
    return (time.perf_counter() - start) * 1000


async def measure(registry: PageRegistry, url: str, repeat: int) -> dict[str, Any]:
    page = registry.get((await registry.create(url, (1280, 720)))["id"])
    tab, shadow = page.page, page.shadow
    reads = {
        "peer": lambda: tab.aria_snapshot(mode="ai"),
        "before": lambda: asyncio.gather(tab.title(), tab.aria_snapshot(mode="ai", boxes=True)),
        "now": lambda: read_page(tab, shadow),
        "title": tab.title,
        "probe": lambda: tab.evaluate(PROBE),
    }
    times: dict[str, list[float]] = {name: [] for name in reads}
    for call in reads.values():  # warm up
        await call()
    for round_ in range(repeat):
        order = list(reads.items())
        for name, call in order[round_ % len(order) :] + order[: round_ % len(order)]:
            times[name].append(await _ms(call))
    medians = {name: statistics.median(values) for name, values in times.items()}
    refs = (await read_page(tab, shadow)).raw.count("[ref=s")
    return {**{f"{k}_ms": round(v, 1) for k, v in medians.items()}, "cdp_reads": shadow.reads, "s_refs": refs,
            "now_over_before": round(medians["now"] / medians["before"], 3),
            "now_over_peer": round(medians["now"] / medians["peer"], 3),
            "added_ms": round(medians["now"] - medians["before"], 1)}  # fmt: skip


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="lookout-bench-"))
    (data / "cards.html").write_text(closed_hosts_page(args.hosts))
    load = [os.getloadavg()[0]]
    registry = PageRegistry(data / "pages", BrowserHost(None), EventBus(), data / "uploads")
    results: dict[str, Any] = {}
    try:
        with serve_directory(python_docs()) as docs, serve_directory(data) as generated:
            for path in DOC_PAGES:
                results[f"python-docs/{path}"] = await measure(registry, f"{docs}/{path}", args.repeat)
            results[f"{args.hosts} closed roots"] = await measure(registry, f"{generated}/cards.html", args.repeat)
    finally:
        await registry.shutdown()
    load.append(os.getloadavg()[0])
    return {"pages": results, "load": load, "repeat": args.repeat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--hosts", type=int, default=20)
    figures = asyncio.run(run(parser.parse_args()))
    print(f"load average {figures['load'][0]:.1f} before, {figures['load'][1]:.1f} after; medians of "
          f"{figures['repeat']} rounds")  # fmt: skip
    print(f"{'page':38} {'peer ms':>8} {'before ms':>9} {'now ms':>7} {'now/before':>10} {'now/peer':>8} "
          f"{'title ms':>8} {'probe ms':>8} {'CDP reads':>9} {'s refs':>6}")  # fmt: skip
    for name, row in figures["pages"].items():
        print(f"{name:38} {row['peer_ms']:8.1f} {row['before_ms']:9.1f} {row['now_ms']:7.1f} "
              f"{row['now_over_before']:10.3f} {row['now_over_peer']:8.3f} {row['title_ms']:8.2f} "
              f"{row['probe_ms']:8.2f} {row['cdp_reads']:9d} {row['s_refs']:6d}")  # fmt: skip
    print(orjson.dumps(figures).decode())


if __name__ == "__main__":
    main()
