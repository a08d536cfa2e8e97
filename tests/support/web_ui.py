"""The web UI driven in a real headless Chromium (Playwright) against the daemon as a subprocess: the browser,
a signed-in window, the terminal card's rows, a bash at its prompt, and screenshots for a person to look at."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from lookout.browser.browser import FLAGS, find_executable
from tests.conftest import REPO, Daemon

SHOTS = REPO / "build" / "ui-screenshots"


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=find_executable(None), args=list(FLAGS))
        yield launched
        launched.close()


def open_ui(browser: Browser, daemon: Daemon, width: int = 1280, height: int = 720) -> tuple[Page, list[str]]:
    """A new browser window on the UI, signed in; the page's script errors are collected."""
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{daemon.url}/")
    page.get_by_label("API token").fill(daemon.token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Views")).to_be_visible()
    return page, errors


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SHOTS / f"{name}.png")


def rows(page: Page) -> Any:
    return page.locator(".xterm-rows")


def daemon_terminal(daemon: Daemon, cwd: Path) -> str:
    """A bash opened over the API, idle at its prompt; its id."""
    with daemon.client() as api:
        tid = api.post("/v1/terminals", json={"command": "bash", "cwd": str(cwd)}).json()["id"]
        ready = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "since": 0})
        assert ready.json()["matched"], ready.text
    return str(tid)
