"""The one Chromium of the daemon: started on first use, stopped with the daemon.

The executable is LOOKOUT_BROWSER_EXECUTABLE, else a system Chromium on PATH, else Playwright's own
download. Chromium runs headless with the flags that keep it off the network by itself (no background
networking, updates or sync); a browser that cannot start is an `Unavailable` error saying how to get one.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from typing import TYPE_CHECKING

from app.browser import playwright_api as pw
from app.core.errors import Unavailable

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

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


class BrowserHost:
    def __init__(self, executable: str | None) -> None:
        self.configured = executable
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

    async def _launch(self) -> Browser:
        executable = find_executable(self.configured)
        if self._playwright is None:
            try:
                api = await pw.load()  # in a worker thread, on the first start
                self._playwright = await api.async_playwright().start()
            except Exception as exc:  # the driver reports a failed start as a bare Exception
                reason = await asyncio.to_thread(_driver_problem) or str(exc).strip() or type(exc).__name__
                raise Unavailable(f"Playwright's driver could not start ({reason}); the browser needs it") from exc
        try:
            return await self._playwright.chromium.launch(executable_path=executable, args=list(FLAGS), headless=True)
        except pw.Error as exc:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise Unavailable(f"no browser could be started ({executable or 'Playwright Chromium'}: {first_line}); "
                              f"{INSTALL_HINT}") from exc  # fmt: skip

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
