"""The live browser contexts of profiles (see lookout.browser.profiles): one per profile while any of its pages
is open, closed (and, with a browser elsewhere, its storage state saved) when its last page closes."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lookout.browser import closed_shadow, in_page
from lookout.browser import playwright_api as pw
from lookout.browser.browser import BrowserHost
from lookout.browser.profiles import ProfileFiles, check_name, storage_state
from lookout.core.errors import Conflict, Unavailable

AT_DOCUMENT_START = in_page.TIMERS_AT_START + closed_shadow.COUNT_AT_START
"""The init script of every context lookout opens (a profile's here, an isolated page's in the registry): the
timer count of actions, and the count of a document's closed shadow roots."""

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext


class ProfileContexts:
    def __init__(self, host: BrowserHost, files: ProfileFiles) -> None:
        self.host = host
        self.files = files
        self._live: dict[str, BrowserContext] = {}
        self._lock = asyncio.Lock()

    def live(self, name: str) -> BrowserContext | None:
        return self._live.get(name)

    async def context(self, name: str, viewport: tuple[int, int]) -> BrowserContext:
        """The profile's context, opened (and the profile made) when none is live."""
        check_name(name)
        async with self._lock:
            if name not in self._live:
                context = await self._open(name, viewport)
                await context.add_init_script(script=AT_DOCUMENT_START)
                self._live[name] = context
            return self._live[name]

    async def _open(self, name: str, viewport: tuple[int, int]) -> BrowserContext:
        if self.host.remote is None:
            user_data = await asyncio.to_thread(self.files.user_data, name)
            return await self.host.persistent(user_data, viewport)
        browser = await self.host.browser()
        state = await asyncio.to_thread(self.files.load_storage, name)
        await asyncio.to_thread(self.files.dir, name, True)
        try:
            return await browser.new_context(
                viewport={"width": viewport[0], "height": viewport[1]}, accept_downloads=True,
                storage_state=state,  # type: ignore[arg-type]
            )  # fmt: skip
        except pw.Error as exc:
            raise Unavailable(f"the browser did not open profile {name!r}: {str(exc).splitlines()[0]}") from exc

    async def release(self, name: str) -> None:
        """The profile's last page has closed: save (browser elsewhere) and close its context."""
        async with self._lock:
            context = self._live.pop(name, None)
            if context is not None:
                await self._close(name, context)

    async def _close(self, name: str, context: BrowserContext) -> None:
        try:
            if self.host.remote is not None:
                state = await context.storage_state(indexed_db=True)
                await asyncio.to_thread(self.files.save_storage, name, dict(state))
            await context.close()
        except pw.Error:  # the browser went away: what was saved last stays
            pass

    async def storage(self, name: str) -> dict[str, Any]:
        """The profile's storage state (Playwright's JSON), read from its live context, else from its files."""
        await asyncio.to_thread(self.files.dir, name)  # NotFound for a profile that does not exist
        context = self._live.get(name)
        if context is not None:
            return dict(await context.storage_state(indexed_db=True))
        if self.host.remote is not None:
            return await asyncio.to_thread(self.files.load_storage, name) or {"cookies": [], "origins": []}
        context = await self.context(name, (1280, 720))
        try:
            return dict(await context.storage_state(indexed_db=True))
        finally:
            await self.release(name)

    async def set_storage(self, name: str, given: Any) -> dict[str, int]:
        """Replace the profile's storage state (made if missing) with `given` (Playwright's JSON)."""
        state = storage_state(given)
        opened = name not in self._live
        context = await self.context(name, (1280, 720))
        try:
            await context.set_storage_state(state)  # type: ignore[arg-type]
        except pw.Error as exc:
            raise Conflict(f"the storage state was not taken: {str(exc).splitlines()[0]}") from exc
        finally:
            if opened:
                await self.release(name)
        if self.host.remote is not None and not opened:
            await asyncio.to_thread(self.files.save_storage, name, state)
        return {"cookies": len(state["cookies"]), "origins": len(state["origins"])}

    async def close_all(self) -> None:
        async with self._lock:
            live, self._live = self._live, {}
        for name, context in live.items():
            await self._close(name, context)
