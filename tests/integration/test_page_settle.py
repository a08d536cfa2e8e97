"""An action's answer holds the outcome it caused, also when the page shows it after a short timer its handler
started (150, 400, 900 ms after a submit), and a timer chain the page runs by itself (a clock) is not waited
for (real headless Chromium, pages served from 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lookout.browser.action_kinds import Click
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from tests.support.pages import ref_of
from tests.support.site import serve_directory

FORM = """<!doctype html><title>Form</title><body>
<form onsubmit="event.preventDefault(); setTimeout(() => {
  document.getElementById('msg').innerHTML = '<p class=&quot;success&quot;>Saved the product.</p>'; }, DELAY)">
<label>Name <input name="n" value="Lamp"></label><button>Save</button></form>
<div id="msg"></div><p>Clock: <span id="clock">0</span></p>
<script>const tick = () => { document.getElementById('clock').textContent = Date.now() % 1000000; setTimeout(tick, 500); };
setTimeout(tick, 500);</script></body>"""

POLL = """<!doctype html><title>Clock</title><body><button onclick="this.textContent = 'Pressed'">Press</button>
<script>window.polls = 0; const poll = () => { window.polls++; setTimeout(poll, 20); }; setTimeout(poll, 20);</script>
</body>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    for delay in (150, 400, 900):
        (root / f"form{delay}.html").write_text(FORM.replace("DELAY", str(delay)))
    (root / "poll.html").write_text(POLL)
    with serve_directory(root) as url:
        yield url


@pytest.mark.parametrize("delay", [150, 400, 900])
async def test_a_message_a_timer_shows_after_the_submit_is_in_the_clicks_answer(
    pages: PageRegistry, site: str, delay: int
) -> None:
    page = pages.get((await pages.create(f"{site}/form{delay}.html", (1280, 720)))["id"])
    save = ref_of((await page.snapshot(SnapshotOptions()))["text"], '- button "Save"')
    done = await page.act(Click(ref=save), SnapshotOptions(max_tokens=2000))
    assert {"kind": "message", "text": "Saved the product."} in done["effects"].get("text", []), done
    assert "# Outcome: message: Saved the product." in done["snapshot"]["text"]
    await page.page.evaluate("document.getElementById('msg').textContent = ''")
    again = await page.act(Click(ref=save), None)  # the clock's timers run inside timers: never the action's
    assert {"kind": "message", "text": "Saved the product."} in again["effects"].get("text", []), again
    assert "its 1 timer fired" in again["settled"], again["settled"]


async def test_a_poll_the_page_started_before_the_first_action_is_never_the_actions(
    pages: PageRegistry, site: str
) -> None:
    """A timer chain armed at load (before lookout ever ran a script in the page) re-arms itself during the action:
    its timers are the poll's, not the click's (before: "its 1 timer fired", and under load 2 for a later click)."""
    page = pages.get((await pages.create(f"{site}/poll.html", (1280, 720)))["id"])
    press = ref_of((await page.snapshot(SnapshotOptions()))["text"], '- button "Press"')
    for _ in range(3):
        done = await page.act(Click(ref=press), None)
        assert done["settled"].startswith("requests ended, DOM quiet"), done["settled"]
