"""A snapshot is the page as it is when answered: a page that changes itself (through nothing lookout calls, in
ways no document mutation observer sees: style sheet rules, constructed and adopted sheets, custom states,
`indeterminate`, a closed shadow root, a manual slot, an iframe in a shadow root, a scroller in a shadow root,
SMIL, a Web Animation) after three snapshots is shown changed by the next snapshot and by a diff against the
first (real headless Chromium, pages served from 127.0.0.1 that wait on a long-poll the test answers)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from tests.support.self_changing import KINDS, Site, self_changing_site, shows


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with self_changing_site() as served:
        yield served


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_a_change_the_page_makes_by_itself_is_in_the_next_snapshot_and_diff(
    pages: PageRegistry, site: Site, kind: str
) -> None:
    spec = KINDS[kind]
    options = SnapshotOptions(viewport_only=spec.viewport_only)
    page = pages.get((await pages.create(f"{site.url}/page/{kind}.html", (1280, 720)))["id"])
    first = await page.snapshot(options)
    for _ in range(2):
        assert shows((await page.snapshot(options))["text"], spec, changed=False)
    assert shows(first["text"], spec, changed=False), first["text"]
    site.release(kind)
    assert await asyncio.to_thread(site.applied, kind)
    after = await page.snapshot(options)
    assert shows(after["text"], spec, changed=True), after["text"]
    if spec.viewport_only:
        return  # a diff is of lines, and a scroll changes none: what is on screen is the snapshot's part
    since = await page.snapshot(options, since=first["obs_id"])
    changed_lines = [line for line in since["text"].splitlines() if line.startswith(("+ ", "- ", "~ "))]
    assert since["metadata"].get("diff_against") == first["obs_id"], since["text"]
    now = [line for line in changed_lines if not line.startswith("- ")]  # added, or changed as it is now
    if spec.new is not None:
        assert any(spec.new in line for line in now), since["text"]
    if spec.gone is not None:  # removed, or its line changed
        assert not any(spec.gone in line for line in now), since["text"]
        assert spec.new is not None or any(spec.gone in line for line in changed_lines), since["text"]
