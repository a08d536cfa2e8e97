"""An action inside an iframe, same- or cross-origin, reports its effects as in the top document: the text it
made appear, the controls it set, the focus inside the frame by role and name, and the frame it was in (real
headless Chromium; the cross-origin frame is served from `localhost`, the page from 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lookout.browser.action_kinds import Click, Fill
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from tests.support.pages import ref_of
from tests.support.site import serve_directory

FRAME = """<!doctype html><title>Newsletter</title>
<form onsubmit="event.preventDefault(); setTimeout(() => document.getElementById('m').innerHTML =
  '<p class=&quot;success&quot;>Thanks for subscribing.</p>', 150)">
<label>Email <input id="e"></label> <button>Subscribe</button></form><div id="m"></div>"""


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("site")
    (root / "frame.html").write_text(FRAME)
    with serve_directory(root) as url:
        other = url.replace("127.0.0.1", "localhost")
        for origin, base in (("same", url), ("cross", other)):
            (root / f"top-{origin}.html").write_text(
                f"<!doctype html><title>Top</title><h1>Shop</h1><iframe src='{base}/frame.html' title='News'></iframe>"
            )
        yield {"same": f"{url}/top-same.html", "cross": f"{url}/top-cross.html", "frame_same": f"{url}/frame.html",
               "frame_cross": f"{other}/frame.html"}  # fmt: skip


@pytest.mark.parametrize("origin", ["same", "cross"])
async def test_an_action_in_an_iframe_reports_its_effects_there(
    pages: PageRegistry, sites: dict[str, str], origin: str
) -> None:
    page = pages.get((await pages.create(sites[origin], (1280, 720)))["id"])
    text = (await page.snapshot(SnapshotOptions()))["text"]
    filled = await page.act(Fill(ref=ref_of(text, '- textbox "Email"'), text="ada@example.org"), None)
    said = filled["effects"]
    assert said["controls"] == [{"control": 'textbox "Email"', "value": "ada@example.org"}], said
    assert said["focus"] == 'textbox "Email"' and said["frame"] == sites[f"frame_{origin}"], said
    assert filled["title"] == "Top", "the page's title, not the frame's"
    clicked = await page.act(Click(ref=ref_of(text, '- button "Subscribe"')), SnapshotOptions())
    said = clicked["effects"]
    assert {"kind": "message", "text": "Thanks for subscribing."} in said["text"], said
    assert said["focus"] == 'button "Subscribe"' and said["frame"] == sites[f"frame_{origin}"], said
    assert "# Outcome: message: Thanks for subscribing." in clicked["snapshot"]["text"]
