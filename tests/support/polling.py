"""The one polling helper of the tests, for conditions nothing announces (a process gone, a file written,
a device listed again): what the daemon does announce (a wait, an event, a readiness line) is awaited instead."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(check: Callable[[], T], timeout: float = 20, what: str = "the condition", interval: float = 0.05) -> T:
    """`check()`'s first truthy result, tried every `interval` seconds; an AssertionError naming `what` once
    `timeout` seconds have passed without one (the deadline is generous: it only bounds a failing test)."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)
    return result
