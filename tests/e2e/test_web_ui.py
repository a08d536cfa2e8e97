"""The web UI in a real headless Chromium (Playwright) against the daemon as a subprocess.

Each main view is also saved as a screenshot in build/ui-screenshots/ (not committed) for a person to look at.
"""
from __future__ import annotations

import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import Daemon
from tests.support.adb_fake import ui_dump, ui_node
from tests.support.polling import eventually
from tests.support.site import serve_directory
from tests.support.web_ui import browser, daemon_terminal, open_ui, rows, shot  # noqa: F401 (browser: a fixture)

UI_XML = ui_dump(ui_node("Button", "Log in", "login", (90, 1500, 990, 1650), clickable=True))


def test_a_wrong_token_is_refused(browser: Browser, daemon: Daemon) -> None:
    page = browser.new_page()
    answer = page.goto(f"{daemon.url}/")
    assert answer is not None and "script-src 'self'" in answer.headers["content-security-policy"]
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.get_by_label("API token").fill("not-the-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not the daemon's")
    expect(page.get_by_role("navigation", name="Views")).to_be_hidden()
    shot(page, "sign-in-refused")


def _signed_in_with_the_lists_held(browser: Browser, daemon: Daemon) -> tuple[Page, list[Any]]:
    """A new window signed in while the side lists wait (their `/v1/pages` requests held until unrouted)."""
    page = browser.new_context().new_page()
    held: list[Any] = []
    page.route("**/v1/pages", lambda route: held.append(route))
    page.goto(f"{daemon.url}/")
    page.get_by_label("API token").fill(daemon.token)
    page.get_by_role("button", name="Sign in").click()
    return page, held


def test_a_form_filled_while_the_lists_load_keeps_what_was_typed(browser: Browser, daemon: Daemon) -> None:
    """Signing in shows the views before the side lists have loaded; a view opened and filled meanwhile is not
    drawn again when they arrive (the new terminal then started in the home directory, not the one typed)."""
    page, held = _signed_in_with_the_lists_held(browser, daemon)  # until the form is filled
    page.get_by_role("link", name="New terminal").click()
    page.get_by_label("Working directory").fill("/somewhere/typed")
    assert held, "the lists are still loading"
    page.unroute("**/v1/pages")  # the held requests go on
    expect(page.get_by_role("navigation", name="Views")).to_be_visible()
    page.wait_for_load_state("networkidle")
    expect(page.get_by_label("Working directory")).to_have_value("/somewhere/typed")


def test_the_side_lists_arriving_move_no_link_under_the_pointer(browser: Browser, daemon: Daemon) -> None:
    """Lists that arrive after the views are shown moved the links below them down a line: a click pressed on
    "New terminal" and released after the move opened nothing (a CI run waited 30 s for the form). The lists hold
    a line while they load, so an empty list's arrival moves nothing (a list that arrives longer still does).
    """
    page, held = _signed_in_with_the_lists_held(browser, daemon)  # until the link is measured
    link = page.get_by_role("link", name="New terminal")
    before = link.bounding_box()
    assert held and before, "the lists are still loading"
    page.unroute("**/v1/pages")
    expect(page.locator("#terminal-list")).to_contain_text("none yet")
    assert link.bounding_box() == before


def test_what_a_person_types_before_the_live_stream_connects_is_sent_once_it_does(
    browser: Browser, daemon: Daemon, tmp_path: Path
) -> None:
    """The view draws the terminal before it connects its stream (after the terminal's facts and cards load):
    keys typed meanwhile were dropped. Here the daemon is stopped (SIGSTOP) while the view opens, so they are
    typed with no stream at all."""
    assert daemon.proc is not None
    page, errors = open_ui(browser, daemon)
    tid = daemon_terminal(daemon, tmp_path)
    daemon.proc.send_signal(signal.SIGSTOP)
    try:
        page.evaluate(f"location.hash = '#/terminals/{tid}'")
        page.locator(".xterm-host textarea").wait_for(state="attached")
        page.locator(".xterm-host").click()
        page.keyboard.type("echo early-$((6*7))")
        page.keyboard.press("Enter")
    finally:
        daemon.proc.send_signal(signal.SIGCONT)
    expect(rows(page)).to_contain_text("early-42", timeout=15000)
    assert not errors, errors


def test_terminal_cards_live_input_take_over_second_window_and_reload(
    browser: Browser, daemon: Daemon, tmp_path: Path
) -> None:
    page, errors = open_ui(browser, daemon)
    page.get_by_role("link", name="New terminal").click()
    page.get_by_label("Command").fill("bash")
    page.get_by_label("Working directory").fill(str(tmp_path))
    page.get_by_role("button", name="Open terminal").click()
    expect(page).to_have_url(re.compile(r"#/terminals/t_[0-9a-f]+$"))
    tid = page.url.rsplit("/", 1)[1]
    expect(page.locator("[data-state]")).to_have_text("idle", timeout=15000)

    page.locator(".xterm-host").click()
    page.keyboard.type("echo hello-$((6*7))")
    page.keyboard.press("Enter")
    expect(rows(page)).to_contain_text("hello-42")
    first = page.locator(".card", has_text="echo hello")
    expect(first.locator("[data-exit-code]")).to_have_text("exit 0")
    expect(first.locator("pre")).to_have_text("hello-42")
    page.keyboard.type("false")
    page.keyboard.press("Enter")
    expect(page.locator(".card", has_text="false").locator("[data-exit-code]")).to_have_text("exit 1")

    prompt = page.get_by_role("textbox", name=f"{tmp_path} $")  # the prompt form, named by the cwd
    prompt.fill("echo from-the-prompt-form")
    prompt.press("Enter")
    expect(page.locator(".card", has_text="from-the-prompt-form").locator("[data-exit-code]")).to_have_text("exit 0")
    shot(page, "terminal")

    with daemon.client() as api:
        before = api.get(f"/v1/terminals/{tid}").json()
        page.set_viewport_size({"width": 900, "height": 560})
        page.wait_for_timeout(500)  # a viewer's window changing size must not change the agent's screen
        assert api.get(f"/v1/terminals/{tid}").json()["cols"] == before["cols"], "watching never resizes the PTY"
        page.get_by_role("button", name="Fit to this window").click()  # the explicit take-over
        expect(page.locator("[data-size]")).not_to_have_text(f"{before['cols']}x{before['rows']}")
        after = api.get(f"/v1/terminals/{tid}").json()
        assert after["cols"] < before["cols"], "the take-over resized the PTY"
        frames = api.get("/v1/timeline/frames", params={"resource": f"terminal:{tid}", "text": "true"}).json()
        resizes = [f for f in frames["frames"] if f["category"] == "terminal resize"]
        assert len(resizes) == 1 and resizes[0]["agent"] == "web-ui", "the timeline says who changed the screen"

    other, other_errors = open_ui(browser, daemon)
    other.goto(f"{daemon.url}/#/terminals/{tid}")
    expect(rows(other)).to_contain_text("from-the-prompt-form")  # hydrated: the screen as it is
    other.locator(".xterm-host").click()
    other.keyboard.type("echo typed-in-the-second-window")
    other.keyboard.press("Enter")
    expect(rows(page)).to_contain_text("typed-in-the-second-window")
    expect(rows(other)).to_contain_text("typed-in-the-second-window")

    page.locator(".xterm-host").click()
    page.keyboard.type("read -s -p 'secret: ' pw")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert").filter(has_text="asking for a password")).to_be_visible()
    shot(page, "terminal-password")
    page.keyboard.type("hunter2")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert").filter(has_text="asking for a password")).to_be_hidden()

    page.reload()
    expect(rows(page)).to_contain_text("typed-in-the-second-window")
    expect(page.locator(".card", has_text="echo hello").locator("[data-exit-code]")).to_have_text("exit 0")
    with daemon.client() as api:
        frames = api.get("/v1/timeline/frames", params={"resource": f"terminal:{tid}", "text": "true"}).json()
    assert "hunter2" not in str(frames)
    assert {f["agent"] for f in frames["frames"] if f["kind"] == "action"} == {"web-ui"}

    page.locator(".xterm-host").click()
    page.keyboard.type("exit 3")
    page.keyboard.press("Enter")
    expect(page.get_by_text("The program exited (code 3)")).to_be_visible()
    expect(page.get_by_role("button", name="Close terminal")).to_be_disabled()
    page.reload()
    expect(rows(page)).to_contain_text("exit 3")  # an exited terminal keeps its last screen
    expect(page.locator(".card", has_text="echo hello").locator("[data-exit-code]")).to_have_text("exit 0")
    assert errors == [] and other_errors == []


def test_narrow_window_and_keyboard_navigation(browser: Browser, daemon: Daemon) -> None:
    page, errors = open_ui(browser, daemon, width=420, height=800)
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused  # the first stop is a real control (skip link or a view)
    page.get_by_role("link", name="Timeline").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Timeline")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 420, "no horizontal scrolling on a narrow window"
    shot(page, "narrow-timeline")
    assert errors == []


def test_devices_pages_and_timeline_views(
    browser: Browser, adb_daemon: Daemon, make_device: Callable[..., Any], tmp_path: Path
) -> None:
    fake, serial = make_device()
    fake.set_ui(UI_XML)
    page, errors = open_ui(browser, adb_daemon)

    page.get_by_role("link", name="Pixel 7").click()
    screen = page.get_by_role("img", name=f"Screen of {serial}; click to tap there")
    expect(screen).to_have_attribute("data-obs-id", re.compile(r"^o_"))
    expect(page.get_by_role("list", name="UI elements")).to_contain_text("Button Log in")
    box = screen.bounding_box()
    assert box is not None
    screen.click(position={"x": box["width"] / 2, "y": box["height"] / 4})
    expect(page.get_by_role("status").filter(has_text="Tapped")).to_be_visible()
    page.get_by_role("button", name="[0]").click()
    expect(page.get_by_role("status").filter(has_text="Tapped element 0")).to_be_visible()
    (_, x, y), element = fake.inputs()
    assert abs(int(x) - 540) <= 12 and abs(int(y) - 600) <= 12, "the click's point, converted to the device"
    assert element == ["tap", "540", "1575"], "the element's centre"
    shot(page, "device")

    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_text("<title>Alpha</title><h1>Alpha page</h1><button>Press</button>")
    (site / "b.html").write_text("<title>Beta</title><h1>Beta page</h1>")
    with serve_directory(site) as base:
        page.get_by_role("link", name="Open page").click()
        page.get_by_label("URL").fill(f"{base}/a.html")
        page.get_by_role("button", name="Open").click()
        expect(page.get_by_role("heading", name="Alpha")).to_be_visible()
        page.get_by_role("button", name="Snapshot").click()
        expect(page.get_by_label("Latest snapshot")).to_contain_text('button "Press"')
        page.get_by_role("button", name="Screenshot").click()
        expect(page.get_by_role("img", name="Latest screenshot of the page")).to_be_visible()
        page.get_by_label("URL").fill(f"{base}/b.html")
        page.get_by_role("button", name="Go").click()
        expect(page.get_by_label("Latest snapshot")).to_contain_text('heading "Beta page"')
        expect(page.locator("#page-list")).to_contain_text("Beta")  # the list follows page.navigated
        shot(page, "page")

    page.get_by_role("link", name="Timeline").click()
    expect(page.get_by_role("table")).to_contain_text(f"device:{serial}")
    page.get_by_role("textbox", name="Resource").fill(f"device:{serial}")
    page.get_by_label("Budget (tokens)").fill("300")
    page.get_by_role("button", name="Show").click()
    history = page.get_by_role("list").filter(has_text="frames")
    expect(history).to_contain_text(f"device:{serial}")
    expect(page.get_by_text("of 300 tokens")).to_be_visible()
    shot(page, "timeline")
    with httpx.Client(base_url=adb_daemon.url, headers={"Authorization": f"Bearer {adb_daemon.token}"}) as api:
        context = api.get("/v1/timeline/context", params={"budget": 300, "resource": f"device:{serial}"}).json()
    assert context["metadata"]["total_tokens"] <= 300
    assert errors == []


def test_without_xterm_the_ui_says_how_to_install_it(tmp_path: Path) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<p>ui</p>")
    daemon = Daemon(tmp_path / "data", LOOKOUT_WEB_DIR=str(web)).start()
    try:
        answer = httpx.get(f"{daemon.url}/")
        assert answer.status_code == 503 and "npm ci" in answer.text and str(web / "node_modules") in answer.text
        assert httpx.get(f"{daemon.url}/ui/vendor/xterm.mjs").status_code == 404
        assert httpx.get(f"{daemon.url}/ui/%2e%2e/%2e%2e/%2e%2e/etc/passwd").status_code == 404
        assert httpx.get(f"{daemon.url}/ui/node_modules/x.js").status_code == 404
        assert httpx.get(f"{daemon.url}/ui/index.html").status_code == 200, "the UI's own files need no token"
        assert httpx.get(f"{daemon.url}/v1/terminals").status_code == 401, "the API still does"
    finally:
        daemon.stop()


def test_markup_from_programs_and_pages_stays_text(browser: Browser, daemon: Daemon, tmp_path: Path) -> None:
    """Command lines, output, titles and page text that look like HTML are shown as text, never run."""
    evil = '<img src=x onerror="window.pwned=1">'
    site = tmp_path / "site"
    site.mkdir()
    (site / "x.html").write_text(f"<title>&lt;b&gt;bold&lt;/b&gt; {evil.replace('<', '&lt;')}</title><p>{evil.replace('<', '&lt;')}</p>")
    with daemon.client() as api, serve_directory(site) as base:
        tid = api.post("/v1/terminals", json={"command": ["bash", "--norc"], "cwd": str(tmp_path), "name": evil}).json()["id"]
        body = {"input": {"text": f"printf '\\033]0;{evil}\\007'; echo '{evil}'", "keys": ["Enter"]},
                "until": {"regex": "onerror"}}  # fmt: skip
        assert api.post(f"/v1/terminals/{tid}/act", json=body).status_code == 200
        page_id = api.post("/v1/pages", json={"url": f"{base}/x.html"}).json()["id"]
        api.post(f"/v1/pages/{page_id}/snapshot", json={})
        page, errors = open_ui(browser, daemon)
        expect(page.locator("#terminal-list")).to_contain_text(evil)
        expect(page.locator("#page-list")).to_contain_text("<b>bold</b>")
        page.goto(f"{daemon.url}/#/terminals/{tid}")
        expect(page.get_by_role("heading", name=evil)).to_be_visible()
        page.goto(f"{daemon.url}/#/pages/{page_id}")
        expect(page.get_by_label("Latest snapshot")).to_contain_text(evil)
        page.goto(f"{daemon.url}/#/timeline")
        expect(page.get_by_role("table")).to_contain_text("onerror")
        assert page.evaluate("window.pwned") is None and page.locator("img[src=x]").count() == 0
        assert errors == []


def test_replay_view_scrubs_to_what_the_agent_saw_and_the_recording_seeks(browser: Browser, daemon: Daemon) -> None:
    with daemon.client() as api:
        tid = api.post("/v1/terminals", json={"command": "bash", "cols": 60, "rows": 8}).json()["id"]
        api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo first-seen\r"}, "until": {"regex": "^first-seen"}})
        api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "clear; echo second-seen\r"}, "until": {"regex": "^second-seen"}})
        page_id = api.post("/v1/pages", json={"url": "data:text/html,<title>Shop</title><button>Buy now</button>"}).json()["id"]
        api.post(f"/v1/pages/{page_id}/snapshot")
        frames = api.get("/v1/timeline/frames", params={"limit": 1000, "text": "true"}).json()["frames"]
    first = next(i for i, f in enumerate(frames) if f["category"] == "terminal screen" and "first-seen" in f["text"]["full"])
    page, errors = open_ui(browser, daemon)
    page.goto(f"{daemon.url}/#/replay")
    scrubber = page.get_by_label("Frame", exact=True)
    expect(scrubber).to_have_attribute("max", str(len(frames) - 1))
    terminal = page.get_by_label(f"Screen of terminal:{tid}")
    expect(terminal).to_contain_text("second-seen")  # the last frame first
    expect(page.locator(f'[data-resource="page:{page_id}"] pre')).to_contain_text('button "Buy now"')
    scrubber.fill(str(first))
    expect(page.locator(".replay-frame")).to_have_attribute("data-seq", str(frames[first]["seq"]))
    expect(terminal).to_contain_text("first-seen")
    expect(terminal).not_to_contain_text("second-seen")
    expect(page.locator(f'[data-resource="page:{page_id}"]')).to_have_count(0)  # not opened yet at that moment
    shot(page, "replay")

    page.goto(f"{daemon.url}/#/terminals/{tid}")
    page.get_by_role("button", name="Load the recording").click()
    recording = page.get_by_label("Recording", exact=True)
    expect(recording.locator(".xterm-rows")).to_contain_text("second-seen")
    page.get_by_label("Recording time").fill("0")
    expect(recording.locator(".xterm-rows")).not_to_contain_text("first-seen")
    assert errors == []


def _cells(value: str | list[list[Any]] | None, width: int, default: str) -> list[str]:
    """A row of a cell layer (a string of symbols, or [start, end, symbol] runs) as one symbol per cell."""
    out = [default] * width
    if isinstance(value, str):
        out[: len(value)] = list(value)
    for start, end, symbol in value if isinstance(value, list) else []:
        out[start:end] = [symbol] * (end - start)
    return out


CELL_COLOURS = """([row, col]) => {
    const line = document.querySelector(`[aria-label^="Screen of"] [data-row="${row}"]`);
    let at = 0;
    for (const span of line.children) {
        at += [...span.textContent].length;
        if (at > col) {
            const style = getComputedStyle(span), box = span.getBoundingClientRect();
            const screen = line.closest("pre").getBoundingClientRect();
            return {fg: style.color, bg: style.backgroundColor, right: box.right, screenRight: screen.right};
        }
    }
    return null;
}"""


def _rgb(colour: str) -> str:
    return f"rgb({int(colour[1:3], 16)}, {int(colour[3:5], 16)}, {int(colour[5:7], 16)})"


@pytest.mark.parametrize("width", [1280, 640])
def test_replay_draws_a_100_column_htop_frame_whole_with_its_colours(
    browser: Browser, daemon: Daemon, width: int
) -> None:
    """The act answer of htop on a 100-column terminal, with its colour layers, is drawn in the Replay view with
    every column in sight (the font scaled to the card) and each cell in the colours the answer gave; a page's
    screenshot frame is drawn as its image."""
    layers = "text,cursor,fgColors,bgColors,styles"
    with daemon.client() as api:
        tid = api.post("/v1/terminals", json={"command": ["htop"], "cols": 100, "rows": 30}).json()["id"]
        answer = api.post(f"/v1/terminals/{tid}/act", json={
            "until": {"regex": "F10Quit", "on": "screen"}, "timeout_ms": 20000, "screen": {"layers": layers},
        }).json()  # fmt: skip
        page_id = api.post("/v1/pages", json={"url": "data:text/html,<h1>Shot</h1>"}).json()["id"]
        assert api.post(f"/v1/pages/{page_id}/screenshot").status_code == 200
    assert answer["ended"] == "screen", answer
    screen = answer["screen"]
    full = [row for row, text in enumerate(screen["text"]) if len(text) == 100]
    assert full, "a row of htop reaches the last column"
    palette = screen["colorPalette"]
    fg = [_cells(screen["fgColors"][r] if r < len(screen["fgColors"]) else "", 100, "0") for r in range(30)]
    bg = [_cells(screen["bgColors"][r] if r < len(screen["bgColors"]) else "", 100, "0") for r in range(30)]
    coloured_bg = next((r, c) for r in range(30) for c in range(100) if palette[bg[r][c]] not in (None, "default-bg"))
    coloured_fg = next((r, c) for r in range(30) for c in range(100) if palette[fg[r][c]] not in (None, "default-fg"))

    page, errors = open_ui(browser, daemon, width=width, height=900)
    page.goto(f"{daemon.url}/#/replay")
    drawn = page.get_by_label(f"Screen of terminal:{tid}")
    expect(drawn.locator(f'[data-row="{full[0]}"]')).to_have_text(screen["text"][full[0]])
    for row, col in (coloured_bg, coloured_fg, (full[0], 99)):
        cell = page.evaluate(CELL_COLOURS, [row, col])
        assert cell is not None, (row, col)
        want_fg, want_bg = palette[fg[row][col]], palette[bg[row][col]]
        if want_fg not in (None, "default-fg", "default-bg"):
            assert cell["fg"] == _rgb(want_fg), (row, col, cell)
        if want_bg not in (None, "default-fg", "default-bg"):
            assert cell["bg"] == _rgb(want_bg), (row, col, cell)
        assert cell["right"] <= cell["screenRight"], f"column {col} of row {row} is in sight: {cell}"
    assert page.evaluate("(el) => el.scrollWidth <= el.clientWidth", drawn.element_handle()), "nothing is cut"
    image = page.locator(f'[data-resource="page:{page_id}"] img')
    expect(image).to_be_visible()
    assert page.evaluate("(img) => img.naturalWidth", image.element_handle()) > 0
    shot(page, f"replay-htop-{width}")
    assert errors == []


def test_a_held_terminal_shows_its_lease_and_a_person_types_only_after_taking_over(
    browser: Browser, daemon: Daemon, tmp_path: Path
) -> None:
    tid = daemon_terminal(daemon, tmp_path)
    with daemon.client() as api:
        api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 600},
                 headers={"X-Lookout-Agent": "agent-A"}).raise_for_status()  # fmt: skip
    page, errors = open_ui(browser, daemon)
    page.evaluate("location.hash = '#/terminals'")
    expect(page.get_by_role("table")).to_contain_text("agent-A until ")  # the listing's "Held by" column
    page.evaluate(f"location.hash = '#/terminals/{tid}'")
    lease = page.get_by_role("status", name="Lease")
    expect(lease).to_contain_text("Held by agent-A until ")
    expect(lease).to_contain_text("refused unless you take over")
    page.locator(".xterm-host").click()
    page.keyboard.type("echo refused-$((3*3))")
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert").filter(has_text="agent-A")).to_be_visible()  # the daemon's refusal
    page.get_by_role("button", name="Type anyway (take over)").click()
    expect(lease).to_contain_text("You took over")
    page.keyboard.type("echo taken-$((4*4))")
    page.keyboard.press("Enter")
    shot(page, "terminal-leased")
    with daemon.client() as api:
        screen = lambda: api.get(f"/v1/terminals/{tid}/screen", params={"format": "text"}).text  # noqa: E731
        eventually(lambda: "taken-16" in screen(), what="the keys typed after taking over")
        assert "refused-9" not in screen()
        assert api.get(f"/v1/terminals/{tid}").json()["lease"]["taken_over_by"] == ["web-ui"]
    assert not errors, errors
