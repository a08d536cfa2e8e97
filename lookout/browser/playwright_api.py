"""Playwright's async API, imported on first use rather than when the daemon starts.

Importing it costs about 0.1 s that a daemon answering its first request, or never asked for a page,
should not pay. `load()` imports it in a worker thread (the browser's first start awaits it); after that
its names are this module's attributes (`pw.Error`, `pw.async_playwright`). An attribute read before
`load()` imports it on the spot. Python's import lock makes concurrent first imports wait for one import.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

MODULE = "playwright.async_api"


async def load() -> ModuleType:
    """Playwright's async API, imported in a worker thread if it is not yet."""
    return await asyncio.to_thread(importlib.import_module, MODULE)


def __getattr__(name: str) -> Any:
    """`pw.Error` and the rest: Playwright's own names (PEP 562)."""
    return getattr(importlib.import_module(MODULE), name)


def on_new_document(frame: Any, callback: Callable[[], None]) -> bool:
    """Call `callback` whenever `frame` commits a new document, not a same-document navigation (pushState,
    replaceState, a hash change), through the event Playwright's frame gets from its driver, which says which
    (`newDocument`; its public `framenavigated` does not). False when this Playwright has no such event: then
    the caller must count every navigation as a new document."""
    emitter = getattr(getattr(frame, "_impl_obj", None), "_event_emitter", None)
    if emitter is None:
        return False
    emitter.on("navigated", lambda event: None if event.get("error") or not event.get("newDocument") else callback())
    return True
