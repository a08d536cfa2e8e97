"""The daemon's browser: a local Chromium started on first use and stopped with the daemon, or one elsewhere.

The executable is LOOKOUT_BROWSER_EXECUTABLE, else a system Chromium on PATH, else Playwright's own
download. Chromium runs headless with the flags that keep it off the network by itself (no background
networking, updates or sync); a browser that cannot start is an `Unavailable` error saying how to get one.

Elsewhere: `LOOKOUT_BROWSER_CDP_URL` attaches to a running Chromium over CDP (a person's own browser started
with `--remote-debugging-port`, a hosted browser service), `LOOKOUT_BROWSER_WS_ENDPOINT` to a Playwright
browser server (`playwright run-server`). A remote browser that does not answer, or went away, is an
`Unavailable` (503) naming its address (without any secret in it) at the call that needs it; the next call
connects again. The daemon never hangs on it: every connection has a deadline.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from lookout.browser import playwright_api as pw
from lookout.core.errors import Unavailable
from lookout.core.redaction import Scrubber, url_secrets

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

FLAGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync", "--disable-quic")  # fmt: skip
SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = (
    "install Chromium (Debian: `apt-get install chromium`; `make run` does it) or point "
    "LOOKOUT_BROWSER_EXECUTABLE at a Chromium or Chrome binary"
)


def find_executable(configured: str | None) -> str | None:
    """The configured executable, else the first system Chromium on PATH; None: Playwright's own."""
    if configured:
        return configured
    return next((path for name in SYSTEM_NAMES if (path := shutil.which(name))), None)


CONNECT_TIMEOUT_MS = 10_000


@dataclass(frozen=True, slots=True)
class Remote:
    """A browser elsewhere: over CDP (`cdp`) or a Playwright server (`ws`), at `url`."""

    kind: str
    url: str

    def shown(self) -> str:
        """The address without credentials or query (a hosted service's token often rides in it)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}"


class BrowserHost:
    def __init__(self, executable: str | None, remote: Remote | None = None) -> None:
        self.configured = executable
        self.remote = remote
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        self.restarts = 0

    async def browser(self) -> Browser:
        """The running browser, started (or restarted after a crash) when needed."""
        async with self._lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if self._browser is not None:
                self.restarts += 1
            self._browser = await self._launch()
            return self._browser

    async def check(self) -> None:
        """Start the browser once and stop it: raises `Unavailable` with the reason when it cannot start."""
        try:
            await self.browser()
        finally:
            await self.stop()

    async def playwright(self) -> Playwright:
        """Playwright's driver, started once."""
        if self._playwright is None:
            try:
                api = await pw.load()  # in a worker thread, on the first start
                self._playwright = await api.async_playwright().start()
            except Exception as exc:  # the driver reports a failed start as a bare Exception
                reason = await asyncio.to_thread(_driver_problem) or str(exc).strip() or type(exc).__name__
                raise Unavailable(f"Playwright's driver could not start ({reason}); the browser needs it") from exc
        return self._playwright

    async def persistent(self, user_data_dir: Path, viewport: tuple[int, int]) -> BrowserContext:
        """A local Chromium of its own on a persistent profile directory (cookies, storage, IndexedDB and service
        workers are Chromium's own files there)."""
        playwright = await self.playwright()
        executable = find_executable(self.configured)
        try:
            return await playwright.chromium.launch_persistent_context(
                user_data_dir, executable_path=executable, args=list(FLAGS), headless=True,
                viewport={"width": viewport[0], "height": viewport[1]}, accept_downloads=True,
            )  # fmt: skip
        except pw.Error as exc:
            raise Unavailable(
                f"the profile's browser could not be started: {_first_line(exc)}; {INSTALL_HINT}"
            ) from exc

    async def _launch(self) -> Browser:
        playwright = await self.playwright()
        if self.remote is not None:
            return await self._connect(playwright, self.remote)
        executable = find_executable(self.configured)
        try:
            return await playwright.chromium.launch(executable_path=executable, args=list(FLAGS), headless=True)
        except pw.Error as exc:
            raise Unavailable(f"no browser could be started ({executable or 'Playwright Chromium'}: "
                              f"{_first_line(exc)}); {INSTALL_HINT}") from exc  # fmt: skip

    async def _connect(self, playwright: Playwright, remote: Remote) -> Browser:
        try:
            if remote.kind == "cdp":
                return await playwright.chromium.connect_over_cdp(remote.url, timeout=CONNECT_TIMEOUT_MS)
            return await playwright.chromium.connect(remote.url, timeout=CONNECT_TIMEOUT_MS)
        except pw.Error as exc:
            what = "Chromium over CDP" if remote.kind == "cdp" else "the Playwright browser server"
            why = Scrubber(url_secrets(remote.url)).scrub(_first_line(exc))  # Playwright quotes the whole address
            raise Unavailable(f"{what} at {remote.shown()} does not answer ({why}); the page calls "
                              "work again once it does") from exc  # fmt: skip

    def gone(self) -> str | None:
        """Why pages of a remote browser cannot answer (it went away), or None."""
        if self.remote is None or self._browser is None or self._browser.is_connected():
            return None
        return f"the browser at {self.remote.shown()} went away; the next page opened connects to it again"

    async def stop(self) -> None:
        async with self._lock:
            if self._browser is not None:
                try:
                    await self._browser.close()
                except pw.Error:
                    pass
                self._browser = None
            if self._playwright is not None:
                await self._playwright.stop()
                self._playwright = None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _driver_problem() -> str | None:
    """Why Playwright's bundled Node.js cannot run (e.g. a missing shared library), from its own stderr."""
    try:
        from playwright._impl._driver import compute_driver_executable  # not public: probe only

        node = compute_driver_executable()[0]
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20)
    except (ImportError, AttributeError, OSError, subprocess.SubprocessError) as exc:
        return str(exc) or None
    lines = done.stderr.strip().splitlines()
    return lines[-1] if done.returncode != 0 and lines else None
