"""Controls inside closed shadow roots, which Playwright's snapshot never reaches, are in lookout's snapshot with
refs `s<N>` and are acted on by those refs (real headless Chromium, pages served from 127.0.0.1); a page without
closed roots is never read over the DevTools protocol."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout.browser.action_kinds import Check, Click, Fill, Hover, Press, Select, Type, Upload, WaitElement
from lookout.browser.page import Page
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from lookout.core.errors import Conflict
from lookout.timeline.recording import current_agent
from tests.conftest import free_port
from tests.support.pages import CLOSED_CARD, ref_of
from tests.support.remote_browsers import registry_elsewhere
from tests.support.site import serve_directory

PLAIN = """<!doctype html><title>Plain</title><h1>Plain</h1><x-open></x-open><button>Go</button>
<script>customElements.define('x-open', class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: 'open'}).innerHTML = '<button>Inside open</button>'; } });</script>"""

DECLARED = """<!doctype html><title>Declared</title><h1>Declared</h1><section id="box"></section>
<script>document.getElementById('box').setHTMLUnsafe(
  '<div><template shadowrootmode="closed"><button>Declared</button></template></div>');</script>"""

UPLOAD = """<!doctype html><title>Upload</title><h1>Upload</h1><x-upload></x-upload><p id="out">-</p>
<script>customElements.define('x-upload', class extends HTMLElement { constructor() { super();
  const root = this.attachShadow({mode: 'closed'});
  root.innerHTML = '<input type="file" aria-label="Resume" id="file">';
  root.getElementById('file').onchange = e => { document.getElementById('out').textContent =
    'Chose ' + e.target.files[0].name + ' (' + e.target.files[0].size + ' bytes)'; }; } });</script>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "card.html").write_text(CLOSED_CARD)
    (root / "plain.html").write_text(PLAIN)
    (root / "declared.html").write_text(DECLARED)
    (root / "upload.html").write_text(UPLOAD)
    with serve_directory(root) as url:
        yield url


async def _open(pages: PageRegistry, url: str) -> tuple[Page, str]:
    page = pages.get((await pages.create(url, (1280, 720)))["id"])
    return page, (await page.snapshot(SnapshotOptions()))["text"]


async def test_controls_of_a_closed_root_are_in_the_snapshot_with_refs(pages: PageRegistry, site: str) -> None:
    page, text = await _open(pages, f"{site}/card.html")
    assert "aria-ref" not in text
    for line in ('- textbox "Email" [ref=s', '- button "Save" [ref=s', '- checkbox "Agree" [ref=s',
                 '- combobox "Size" [ref=s'):  # fmt: skip
        assert ref_of(text, line).startswith("s"), text
    assert ref_of(text, '- link "More"').startswith("s"), "a host without a role of its own (ignored by Chromium)"
    lines = text.splitlines()
    card = next(i for i, line in enumerate(lines) if line.strip().startswith('- group "Card"'))
    save = next(i for i, line in enumerate(lines) if '- button "Save"' in line)
    indent = len(lines[card]) - len(lines[card].lstrip())
    assert save > card and len(lines[save]) - len(lines[save].lstrip()) > indent, "under the host's line"
    assert text.count("light child") == 1, "the host's light child once, as Playwright shows it"
    assert page.shadow.reads == 1


async def test_a_closed_root_button_clicked_by_its_ref_runs_its_handler(pages: PageRegistry, site: str) -> None:
    page, text = await _open(pages, f"{site}/card.html")
    filled = await page.act(Fill(ref=ref_of(text, '- textbox "Email"'), text="ann@example.org"), None)
    assert filled["effects"]["controls"] == [{"control": 'textbox "Email"', "value": "ann@example.org"}], filled
    assert filled["effects"]["focus"] == 'textbox "Email"', "the element focused in the closed root, not its host"
    done = await page.act(Click(ref=ref_of(text, '- button "Save"')), SnapshotOptions())
    assert "Saved ann@example.org" in done["snapshot"]["text"]
    after = (await page.snapshot(SnapshotOptions()))["text"]
    email = ref_of(text, '- textbox "Email"')
    assert f'- textbox "Email" [ref={email}]: ann@example.org' in after, "the value the fill set, in the snapshot"


async def test_check_select_type_press_and_hover_by_closed_root_refs(pages: PageRegistry, site: str) -> None:
    page, text = await _open(pages, f"{site}/card.html")
    await page.act(Check(ref=ref_of(text, '- checkbox "Agree"')), None)
    assert await page.page.text_content("#out") == "Agree true"
    await page.act(Select(ref=ref_of(text, '- combobox "Size"'), values=("Large",)), None)
    assert await page.page.text_content("#out") == "Size Large"
    email = ref_of(text, '- textbox "Email"')
    await page.act(Type(ref=email, text="bo"), None)
    await page.act(Press(ref=email, key="Enter"), None)
    assert await page.page.text_content("#out") == "Enter pressed"
    await page.act(Hover(ref=ref_of(text, '- button "Save"')), None)
    assert await page.page.text_content("#out") == "Hovering"
    again = (await page.snapshot(SnapshotOptions()))["text"]
    assert ref_of(again, '- checkbox "Agree" [checked]') == ref_of(text, '- checkbox "Agree"'), "the ref stays"
    assert f'- textbox "Email" [ref={email}]: bo' in again, "the typed value, in the snapshot"


async def test_a_stale_closed_root_ref_and_a_wait_on_one_are_refused(pages: PageRegistry, site: str) -> None:
    page, text = await _open(pages, f"{site}/card.html")
    gone = ref_of(text, '- button "Remove me"')
    await page.act(Click(ref=gone), None)
    with pytest.raises(Conflict) as stale:
        await page.act(Click(ref=gone), None)
    assert f"ref {gone} is no longer on the page" in stale.value.message
    with pytest.raises(Conflict) as wait:
        await page.act(WaitElement(ref=ref_of(text, '- button "Save"')), None)
    assert "closed shadow root" in wait.value.message


async def test_a_page_without_closed_roots_is_never_read_over_cdp(pages: PageRegistry, site: str) -> None:
    page, text = await _open(pages, f"{site}/plain.html")
    await page.act(Click(ref=ref_of(text, '- button "Go"')), SnapshotOptions())
    assert "[ref=s" not in text and 'button "Inside open"' in text
    assert page.shadow.reads == 0
    raw = page.observation(page.last_obs or "")["raw"]
    boxes = "[box=" in raw  # a read without them when the answer cannot depend on them (docs/pages.md)
    assert raw == await page.page.aria_snapshot(mode="ai", boxes=boxes), "the raw text is Playwright's own"


@pytest.mark.parametrize("kind", ["ws", "cdp"])
async def test_closed_roots_on_a_browser_elsewhere(tmp_path: Path, site: str, kind: str) -> None:
    """A Playwright browser server and a Chromium over CDP give the CDP session the closed roots are read by."""
    async with registry_elsewhere(tmp_path, kind, free_port()) as registry:
        page, text = await _open(registry, f"{site}/card.html")
        await page.act(Fill(ref=ref_of(text, '- textbox "Email"'), text="far"), None)
        await page.act(Click(ref=ref_of(text, '- button "Save"')), None)
        assert "Saved far" in (await page.snapshot(SnapshotOptions()))["text"]


async def test_a_closed_root_declared_in_html_set_by_script_is_read(pages: PageRegistry, site: str) -> None:
    page, text = await _open(pages, f"{site}/declared.html")
    assert ref_of(text, '- button "Declared"').startswith("s"), text
    assert page.shadow.reads == 1, "counted by the init script's hook of setHTMLUnsafe"


async def test_a_closed_root_ref_after_another_hands_action(pages: PageRegistry, site: str) -> None:
    """Another hand acted after the agent's snapshot: a closed root's ref whose element stayed as it was works,
    one whose element that hand removed is a 409 that names the hand."""
    token = current_agent.set("A")
    try:
        page, text = await _open(pages, f"{site}/card.html")
        gone, save = ref_of(text, '- button "Remove me"'), ref_of(text, '- button "Save"')
        current_agent.set("B")
        await page.snapshot(SnapshotOptions())
        await page.act(Click(ref=gone), None)
        current_agent.set("A")
        with pytest.raises(Conflict) as removed:
            await page.act(Click(ref=gone), None)
        assert f"ref {gone}" in removed.value.message and "'B'" in removed.value.message
        await page.act(Click(ref=save), None)
        assert await page.page.text_content("#out") == "Saved "
    finally:
        current_agent.reset(token)


async def test_a_click_covered_inside_the_closed_root_names_what_covers_it(pages: PageRegistry, site: str) -> None:
    page, text = await _open(pages, f"{site}/card.html")
    await page.act(Click(ref=ref_of(text, '- button "Busy"')), None)
    with pytest.raises(Conflict) as covered:
        await page.act(Click(ref=ref_of(text, '- button "Save"')), None)
    assert 'is covered by dialog "Busy"' in covered.value.message
    assert await page.page.text_content("#out") == "-", "the click did not go through"


async def test_a_file_input_in_a_closed_root_takes_a_file_by_its_ref(
    pages: PageRegistry, site: str, tmp_path: Path
) -> None:
    page, text = await _open(pages, f"{site}/upload.html")
    ref = ref_of(text, '- button "Resume"')
    assert ref.startswith("s"), text
    resume = tmp_path / "resume.txt"
    resume.write_text("twelve bytes")
    await page.act(Upload(ref=ref, files=(str(resume),)), None)
    assert await page.page.text_content("#out") == "Chose resume.txt (12 bytes)"
