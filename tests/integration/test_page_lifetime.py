"""Pages are freed: an idle page closes with a `page.closed` event, and a limit on open pages is a 409 that
says what to do (real headless Chromium)."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lookout.browser.browser import BrowserHost
from lookout.browser.registry import PageRegistry
from lookout.core.errors import BadInput, Conflict, NotFound
from lookout.core.events import EventBus

PAGE = "data:text/html,<title>T</title><button>Go</button>"


async def test_an_idle_page_closes_with_an_event_and_a_used_one_stays(tmp_path: Path) -> None:
    bus = EventBus()
    events = bus.subscribe()
    pages = PageRegistry(tmp_path / "pages", BrowserHost(None), bus, tmp_path / "up", idle_s=1.0)
    try:
        idle = await pages.create(PAGE, (1280, 720))
        used = await pages.create(PAGE, (1280, 720))
        closed = None
        for _ in range(80):  # keep `used` in use while `idle` is left alone
            pages.get(used["id"])
            try:
                event = await asyncio.wait_for(events.next(), 0.25)
            except TimeoutError:
                continue
            if event["type"] == "page.closed":
                closed = event
                break
        assert closed is not None and closed["id"] == idle["id"] and closed["reason"] == "idle"
        with pytest.raises(NotFound):
            pages.get(idle["id"])
        assert [p["id"] for p in await pages.describe_all()] == [used["id"]]
    finally:
        await pages.shutdown()


async def test_a_page_past_the_limit_is_a_conflict_that_says_what_to_do(tmp_path: Path) -> None:
    pages = PageRegistry(tmp_path / "pages", BrowserHost(None), EventBus(), tmp_path / "up", max_pages=2)
    try:
        first = await pages.create(PAGE, (1280, 720))
        await pages.create(PAGE, (1280, 720))
        with pytest.raises(Conflict) as refused:
            await pages.create(PAGE, (1280, 720))
        assert "LOOKOUT_MAX_PAGES=2" in refused.value.message and "DELETE /v1/pages/" in refused.value.message
        assert first["id"] in refused.value.message  # the least recently used, to close
        await pages.close(first["id"])
        await pages.create(PAGE, (1280, 720))
    finally:
        await pages.shutdown()


@pytest.mark.parametrize("name", ["a\x00b.txt", "x" * 5000, "../../etc/passwd", "missing.txt"])
def test_an_upload_name_that_cannot_be_a_file_there_is_bad_input(tmp_path: Path, name: str) -> None:
    (tmp_path / "up").mkdir()
    pages = PageRegistry(tmp_path / "pages", BrowserHost(None), EventBus(), tmp_path / "up")
    with pytest.raises(BadInput) as refused:
        pages.upload_paths([name])
    assert refused.value.details.get("field") == "files" and len(refused.value.message) < 400
