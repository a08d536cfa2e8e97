"""Snapshots of real pages nobody here wrote (Debian's Python documentation, Django's admin over a generated
shop), in real headless Chromium, checked against Chromium's own accessibility tree."""
from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from lookout.browser.action_kinds import Click, Fill, Navigate
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from tests.support.pages import ref_of
from tests.support.real_pages import (
    DJANGO_PASSWORD,
    DJANGO_USER,
    PYTHON_DOC_PAGES,
    make_django_site,
    onscreen_controls,
    python_docs,
    recall,
    serve_django,
    shown_controls,
)
from tests.support.site import serve_directory

DJANGO_PAGES = ("/admin/login/", "/admin/", "/admin/shop/product/", "/admin/shop/product/7/change/")


@pytest.fixture(scope="module")
def docs_url() -> Iterator[str]:
    with serve_directory(python_docs()) as url:
        yield url


@pytest.fixture(scope="module")
def django_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_django(make_django_site(tmp_path_factory.mktemp("django"))) as url:
        yield url


async def _recall_of_default_snapshot(pages: PageRegistry, page_id: str) -> tuple[float, list, dict]:
    page = pages.get(page_id)
    snap = await page.snapshot(SnapshotOptions())
    truth = await onscreen_controls(page.page)
    assert truth, "the page has controls on screen"
    share, missing = recall(truth, shown_controls(snap["text"]))
    return share, missing, snap


@pytest.mark.parametrize("path", PYTHON_DOC_PAGES)
async def test_every_onscreen_control_of_python_docs_is_shown(pages: PageRegistry, docs_url: str, path: str) -> None:
    page = await pages.create(f"{docs_url}/{path}", (1280, 720))
    share, missing, snap = await _recall_of_default_snapshot(pages, page["id"])
    assert snap["metadata"]["tokens"] <= 4000
    assert missing == [] and share == 1.0


async def _django_page(pages: PageRegistry, base: str, path: str) -> str:
    page = await pages.create(f"{base}/admin/login/", (1280, 720))
    if path != "/admin/login/":
        playwright_page = pages.get(page["id"]).page
        await playwright_page.fill("#id_username", DJANGO_USER)
        await playwright_page.fill("#id_password", DJANGO_PASSWORD)
        await playwright_page.click("input[type=submit]")
        await playwright_page.wait_for_url(f"{base}/admin/")
        await playwright_page.goto(f"{base}{path}")
    return page["id"]


@pytest.mark.parametrize("path", DJANGO_PAGES)
async def test_every_onscreen_control_of_django_admin_is_shown(pages: PageRegistry, django_url: str, path: str) -> None:
    page_id = await _django_page(pages, django_url, path)
    share, missing, snap = await _recall_of_default_snapshot(pages, page_id)
    assert snap["metadata"]["tokens"] <= 4000
    assert missing == [] and share == 1.0


_REF = re.compile(r" \[ref=[^\]]+\]")
_FOLD = re.compile(r'(: |\s\[)\d+ (?:more folded|[a-z]+s?\b).*folded.*$')


@pytest.mark.parametrize("budget", [300, 800, 2000, 4000])
async def test_folding_never_alters_a_shown_line(pages: PageRegistry, docs_url: str, budget: int) -> None:
    """Every line of a budgeted view is a line of the full view (less a fold summary; refs aside: a bare
    container keeps its ref when something of it is folded), so no sentence, link or heading loses a word."""
    page = await pages.create(f"{docs_url}/tutorial/controlflow.html", (1280, 720))
    full = (await pages.get(page["id"]).snapshot(SnapshotOptions(full=True)))["text"]
    assert "- text: part is optional. The keyword ‘elif’ is short for ‘else if’" in full
    assert "- heading [level=2] [ref=" in full and "]: 4.1. if Statements" in full
    full_lines = {_REF.sub("", line.strip()) for line in full.splitlines()}
    view = (await pages.get(page["id"]).snapshot(SnapshotOptions(max_tokens=budget, max_elements=100_000)))["text"]
    for line in view.splitlines():
        line = line.strip()
        if line.startswith(("#", "- …")):
            continue
        assert _REF.sub("", _FOLD.sub("", line)) in full_lines, line


async def test_an_actions_answer_shows_what_changed_because_of_it(pages: PageRegistry, django_url: str) -> None:
    """Django's admin: a checkbox's click changes the selection counter; Save navigates to the list with
    its "was changed successfully" message; Save with a required field emptied shows the field's error."""
    page_id = await _django_page(pages, django_url, "/admin/shop/product/")
    snap = await pages.get(page_id).snapshot(SnapshotOptions())
    clicked = await pages.get(page_id).act(Click(ref=ref_of(snap["text"], '- checkbox "Select this object')), None)
    assert {"kind": "added", "text": "1 of 100 selected"} in clicked["effects"]["text"], clicked

    await pages.get(page_id).act(Navigate(url=f"{django_url}/admin/shop/product/7/change/"), None)
    snap = await pages.get(page_id).snapshot(SnapshotOptions())
    saved = await pages.get(page_id).act(Click(ref=ref_of(snap["text"], '- button "Save" [')), None)
    assert saved["effects"]["navigation"]["url"] == f"{django_url}/admin/shop/product/"
    messages = [t for t in saved["effects"]["text"] if "was changed successfully" in t["text"]]
    assert messages and messages[0]["kind"] == "message", saved

    await pages.get(page_id).act(Navigate(url=f"{django_url}/admin/shop/product/7/change/"), None)
    snap = await pages.get(page_id).snapshot(SnapshotOptions())
    await pages.get(page_id).act(Fill(ref=ref_of(snap["text"], '- textbox "Name:"'), text=""), None)
    refused = await pages.get(page_id).act(Click(ref=ref_of(snap["text"], '- button "Save" [')), None)
    assert {"kind": "field_error", "text": "Name: This field is required."} in refused["effects"]["text"], refused
