"""The event bus: lifecycle events of every resource, fanned out to subscribers (WS /v1/events).

Publishing never blocks: each subscriber has a bounded queue, and one that falls behind loses its oldest
events (its next read starts with a `dropped` event that says how many) rather than slowing anyone down.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

QUEUE_SIZE = 1000


class Subscription:
    def __init__(self, size: int) -> None:
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(size)
        self._dropped = 0

    def deliver(self, event: dict[str, Any]) -> None:
        if self._queue.full():
            self._queue.get_nowait()
            self._dropped += 1
        self._queue.put_nowait(event)

    async def next(self) -> dict[str, Any]:
        if self._dropped:
            count, self._dropped = self._dropped, 0
            return {"type": "dropped", "ts": time.time(), "count": count}
        return await self._queue.get()


class EventBus:
    def __init__(self, queue_size: int = QUEUE_SIZE) -> None:
        self._queue_size = queue_size
        self._subscribers: set[Subscription] = set()

    def publish(self, type_: str, **fields: Any) -> None:
        event = {"type": type_, "ts": time.time(), **fields}
        for subscription in self._subscribers:
            subscription.deliver(event)

    def subscribe(self) -> Subscription:
        subscription = Subscription(self._queue_size)
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)
