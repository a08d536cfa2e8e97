"""A bounded queue for one consumer that may be slow: the producer never waits, memory never grows.

When more than `max_bytes` are pending, everything pending is dropped and the consumer is told to resync
(start again from a fresh full state) instead of reading a stream with a hole in it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class BoundedFeed(Generic[T]):
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: deque[T] = deque()
        self._size = 0
        self._ready = asyncio.Event()
        self._overflowed = False

    @property
    def pending(self) -> bool:
        return bool(self._items) or self._overflowed

    def push(self, item: T, size: int) -> None:
        if self._overflowed:
            return
        if self._size + size > self.max_bytes:
            self._items.clear()
            self._size = 0
            self._overflowed = True
        else:
            self._items.append(item)
            self._size += size
        self._ready.set()

    async def take(self) -> list[T] | None:
        """Everything pending (waiting for something first), or None when the consumer must resync."""
        await self._ready.wait()
        self._ready.clear()
        if self._overflowed:
            self._overflowed = False
            return None
        items = list(self._items)
        self._items.clear()
        self._size = 0
        return items
