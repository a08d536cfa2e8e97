"""What reading without Playwright's boxes saves: lookout's fresh snapshot now (a read without boxes where the
answer cannot depend on them, else placed by its refs' boxes, lookout.browser.ref_places) beside the same
snapshot read with Playwright's boxes (as every read was before) and beside
Playwright's `aria_snapshot(mode="ai")`, on the same tab, in turns; and an action's snapshot, a diff against the
last snapshot (`since`, read without boxes now), beside the same diff read with boxes.

Pages: the changing pages of bench/changing_pages.py (over the default budget: their full view is placed either way) and
Django's admin (login, index, a change form within the budget; the product list over it). Each round calls the
five in a turning order; lookout's kept answers are dropped before each of its calls (parsed and rendered
again, as after a change). Wall time is the median of the per-round ratios; CPU time (this process, Chromium and
Playwright's driver) the ratio of the sums. The last line is one JSON object with the same figures.

    .venv/bin/python bench/boxless_reads.py [--rounds 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from browser_snapshot import DJANGO_PAGES, VIEWPORT, descendants, serve, timed  # noqa: E402
from changing_pages import SPACING_S, changing_pages  # noqa: E402

from lookout.browser.browser import BrowserHost  # noqa: E402
from lookout.browser.page import Page  # noqa: E402
from lookout.browser.registry import PageRegistry  # noqa: E402
from lookout.browser.snapshot_view import SnapshotOptions  # noqa: E402
from lookout.browser.views import forget_answers  # noqa: E402
from lookout.core.events import EventBus  # noqa: E402
from tests.support.real_pages import django_login, make_django_site, serve_django  # noqa: E402


async def rounds_on(ours: Page, rounds: int) -> dict[str, Any]:
    """`rounds` rounds of the five reads on the page `ours` shows now."""
    tab = ours.page
    answered: list[str] = []
    """The obs_id of each of lookout's answers now (whether its read had boxes is looked up after the rounds)."""

    by_refs = [0]
    """How many of them were placed by the refs' boxes (lookout.browser.ref_places), not Playwright's."""

    async def now() -> dict[str, Any]:
        forget_answers()
        reads = ours.places.reads
        answer = await ours.snapshot(SnapshotOptions())
        answered.append(answer["obs_id"])
        by_refs[0] += ours.places.reads - reads
        return answer

    async def boxes() -> dict[str, Any]:
        forget_answers()
        ours._boxes, places = True, ours.places  # what every read did before: ask for Playwright's boxes
        ours.places = None  # type: ignore[assignment]  # no reader of the refs' boxes: Playwright's
        try:
            return await ours.snapshot(SnapshotOptions())
        finally:
            ours.places = places

    async def diff() -> dict[str, Any]:
        forget_answers()
        return await ours.snapshot(SnapshotOptions(), since=ours.last_obs)

    async def diff_boxes() -> dict[str, Any]:
        forget_answers()
        guess = ours._boxes
        ours._boxes, ours._obs_url, places = True, "", ours.places  # what a diff's read did before: ask for boxes
        ours.places = None  # type: ignore[assignment]
        try:
            return await ours.snapshot(SnapshotOptions(), since=ours.last_obs)
        finally:
            ours._boxes, ours.places = guess, places  # the guess the page's views left, as a diff leaves it

    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "peer": lambda: tab.aria_snapshot(mode="ai"), "now": now, "boxes": boxes, "diff": diff,
        "diff_boxes": diff_boxes}  # fmt: skip
    await boxes()  # the page's first read: lookout's guess for the next one
    wall: dict[str, list[float]] = {kind: [] for kind in calls}
    cpu: dict[str, float] = dict.fromkeys(calls, 0.0)
    pids = descendants()
    kinds = list(calls)
    for round_ in range(rounds):
        for kind in kinds[round_ % len(kinds) :] + kinds[: round_ % len(kinds)]:
            await asyncio.sleep(SPACING_S)
            _, seconds, cpu_s = await timed(calls[kind], pids)
            wall[kind].append(seconds)
            cpu[kind] += cpu_s

    with_boxes = ["[box=" in ours.observation(obs_id)["raw"] for obs_id in answered]

    def paired(kind: str, over: str = "peer") -> float:
        return statistics.median(a / max(b, 1e-9) for a, b in zip(wall[kind], wall[over], strict=True))

    return {"peer_ms": statistics.median(wall["peer"]) * 1000, "now_ms": statistics.median(wall["now"]) * 1000,
            "boxes_ms": statistics.median(wall["boxes"]) * 1000, "now_x": paired("now"), "boxes_x": paired("boxes"),
            "now_over_boxes": paired("now", "boxes"),
            "diff_ms": statistics.median(wall["diff"]) * 1000, "diff_x": paired("diff"),
            "diff_boxes_x": paired("diff_boxes"), "diff_cpu_x": cpu["diff"] / cpu["peer"],
            "diff_boxes_cpu_x": cpu["diff_boxes"] / cpu["peer"], "now_cpu_x": cpu["now"] / cpu["peer"],
            "boxes_cpu_x": cpu["boxes"] / cpu["peer"], "read_without_boxes": with_boxes.count(False) - by_refs[0],
            "placed_by_refs": by_refs[0], "reads": len(with_boxes)}  # fmt: skip


async def run(rounds: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="lookout-boxless-"))
    for name, html in changing_pages().items():
        (folder / f"{name}.html").write_text(f"<!doctype html><html><body>{html}</body></html>")
    server, url = serve(folder)
    registry = PageRegistry(folder / "data" / "pages", BrowserHost(None), EventBus(), folder / "data" / "uploads")
    figures: dict[str, Any] = {}
    try:
        ours = registry.get((await registry.create(None, VIEWPORT))["id"])
        for name in changing_pages():
            await ours.page.goto(f"{url}/{name}.html")
            figures[name] = await rounds_on(ours, rounds)
        with serve_django(make_django_site(folder / "django")) as django_url:
            for path in DJANGO_PAGES:
                await ours.page.goto(f"{django_url}{path}")
                figures[f"django{path}"] = await rounds_on(ours, rounds)
                if path == "/admin/login/":
                    await django_login(ours.page, django_url)
    finally:
        await registry.shutdown()
        server.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12, help="rounds of the five reads on each page")
    args = parser.parse_args()
    load_before = os.getloadavg()
    figures = asyncio.run(run(args.rounds))
    load_after = os.getloadavg()
    print(f"boxless_reads: {args.rounds} rounds a page; load average {load_before[0]:.1f} before, "
          f"{load_after[0]:.1f} after (2 cores shared with other work)")  # fmt: skip
    print("x: time over Playwright's aria_snapshot(mode='ai') on the same tab; now: lookout's fresh snapshot; "
          "boxes: the same read with Playwright's boxes, as before")  # fmt: skip
    print(f"{'page':<36} {'peer ms':>8} {'now ms':>8} {'boxes ms':>9} {'now x':>6} {'boxes x':>8} {'now/boxes':>10} "
          f"{'CPU now x':>10} {'CPU boxes x':>12} {'without boxes':>14} {'by refs':>8} {'diff x':>7} {'diff boxes x':>13} "
          f"{'CPU diff x':>11} {'CPU diff boxes x':>17}")  # fmt: skip
    for name, f in figures.items():
        print(f"{name:<36} {f['peer_ms']:>8.1f} {f['now_ms']:>8.1f} {f['boxes_ms']:>9.1f} {f['now_x']:>6.2f} "
              f"{f['boxes_x']:>8.2f} {f['now_over_boxes']:>10.2f} {f['now_cpu_x']:>10.2f} {f['boxes_cpu_x']:>12.2f} "
              f"{f['read_without_boxes']:>11}/{f['reads']:<2} {f['placed_by_refs']:>8} {f['diff_x']:>7.2f} "
              f"{f['diff_boxes_x']:>13.2f} "
              f"{f['diff_cpu_x']:>11.2f} {f['diff_boxes_cpu_x']:>17.2f}")  # fmt: skip
    print(json.dumps({"bench": "boxless_reads", "rounds": args.rounds, "pages": figures,
                      "load": {"before": list(load_before), "after": list(load_after)}}))  # fmt: skip


if __name__ == "__main__":
    main()
