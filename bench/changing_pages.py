"""Pages that change themselves between reads, for bench/browser_snapshot.py: a fresh read of each, lookout's
beside Playwright's `aria_snapshot(mode="ai")` on the same tab, reads 0.25 s apart.

- clock: a dashboard (a navigation of 40 links, 24 cards with buttons) whose clock ticks every 100 ms;
- rows: a live log, a table of 100 rows with a link each, one row appended every 100 ms;
- animation: an article with a CSS animation that moves a banner (its link and button with it) and an SVG
  whose circle SMIL animates, both running all the time.

Each read finds a page that changed since the last one (the clock's text, the new rows, the banner's box), so
neither lookout's parse nor its view can be kept: this is the read after almost every action.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Page

SPACING_S = 0.25
"""Between two reads of a page (either side's)."""


def changing_pages() -> dict[str, str]:
    """name -> the body of an HTML document (with its scripts and styles)."""
    nav = "".join(f"<li><a href='/n/{i}'>Section {i}</a></li>" for i in range(40))
    cards = "".join(f"<article><h3>Card {i}</h3><p>Metric {i}: {i * 7 % 100}%</p><button>Open {i}</button>"
                    "</article>" for i in range(24))  # fmt: skip
    clock = ("<script>const t = document.getElementById('clock'); setInterval(() => "
             "{ t.textContent = new Date().toISOString().slice(11, 22); }, 100);</script>")  # fmt: skip
    rows = "".join(f"<tr><td>{i}</td><td>event {i} from worker {i % 7}</td><td><a href='/e/{i}'>Open</a></td></tr>"
                   for i in range(100))  # fmt: skip
    append = ("<script>let n = 100; const body = document.querySelector('tbody'); setInterval(() => { "
              "const tr = document.createElement('tr'); tr.innerHTML = `<td>${n}</td><td>event ${n} from worker "
              "${n % 7}</td><td><a href='/e/${n}'>Open</a></td>`; body.append(tr); n++; }, 100);</script>")  # fmt: skip
    paragraphs = "".join(f"<h2>Part {s}</h2>" + "".join(
        f"<p>Paragraph {s}.{p} with <a href='/r/{s}/{p}'>a reference</a> and more words to read.</p>"
        for p in range(8)) for s in range(10))  # fmt: skip
    moving = ("<style>@keyframes slide { from { transform: translateX(0) } to { transform: translateX(400px) } } "
              ".banner { animation: slide 2s linear infinite alternate; width: 300px }</style>"
              "<div class='banner'><a href='/offer'>Today's offer</a> <button>Dismiss</button></div>"
              "<svg width='200' height='60' role='img' aria-label='Progress'><circle cx='10' cy='30' r='8'>"
              "<animate attributeName='cx' from='10' to='190' dur='1.5s' repeatCount='indefinite'/></circle></svg>")  # fmt: skip
    return {
        "clock": f"<title>Status</title><nav aria-label='Menu'><ul>{nav}</ul></nav><main><h1>Status</h1>"
                 f"<p>Now: <time id='clock'>--</time></p>{cards}</main>{clock}",
        "rows": f"<title>Live log</title><h1>Live log</h1><table><thead><tr><th>#</th><th>Event</th><th>Link</th>"
                f"</tr></thead><tbody>{rows}</tbody></table>{append}",
        "animation": f"<title>Article</title>{moving}<main><h1>Long read</h1>{paragraphs}</main>",
    }  # fmt: skip


async def fresh_reads(
    page: Page, url: str, ours: Callable[[], Awaitable[Any]], reads: int,
    timed: Callable[[Callable[[], Awaitable[Any]], list[int]], Awaitable[tuple[Any, float, float]]],
    pids: list[int],
) -> dict[str, Any]:  # fmt: skip
    """`reads` rounds on the page at `url`: in each, Playwright's `aria_snapshot(mode="ai")` and lookout's
    snapshot, each 0.25 s after the read before it, the order turning each round; the median times and the
    median of the ratios within a round, by wall and by CPU time."""
    await page.goto(url)
    calls: dict[str, Callable[[], Awaitable[Any]]] = {"base": lambda: page.aria_snapshot(mode="ai"), "ours": ours}
    wall: dict[str, list[float]] = {"base": [], "ours": []}
    cpu: dict[str, list[float]] = {"base": [], "ours": []}
    for round_ in range(reads):
        for kind in ("base", "ours") if round_ % 2 == 0 else ("ours", "base"):
            await asyncio.sleep(SPACING_S)
            _, seconds, cpu_s = await timed(calls[kind], pids)
            wall[kind].append(seconds)
            cpu[kind].append(cpu_s)

    def ratio(times: dict[str, list[float]]) -> float:
        return statistics.median(o / max(b, 1e-9) for o, b in zip(times["ours"], times["base"], strict=True))

    return {"baseline_ms": statistics.median(wall["base"]) * 1000, "ms": statistics.median(wall["ours"]) * 1000,
            "ratio": ratio(wall), "max_ratio": max(o / max(b, 1e-9) for o, b in zip(wall["ours"], wall["base"], strict=True)),
            "cpu_ratio": ratio(cpu), "reads": reads}  # fmt: skip
