"""Small thread pools for CPU-heavy request work (searches, big renders): the event loop awaits them, at
most `workers` run at once and the rest wait their turn, so hostile requests queue instead of piling up."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class BoundedPool:
    def __init__(self, name: str, workers: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """`fn(*args)` in one of the pool's threads."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
