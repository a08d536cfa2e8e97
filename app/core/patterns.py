"""Regular expressions that agents send, compiled with the `regex` module and searched within a time
limit: a pattern with catastrophic backtracking (`(a+)+$` on a long line) gets a clear error instead of
holding the event loop (Python's `re` cannot be interrupted and keeps the GIL while it matches).
"""
from __future__ import annotations

import time

import regex

SEARCH_LIMIT_S = 0.25
"""How long all the searches of one request (or of one pass of a wait) may take together."""

IGNORECASE = regex.IGNORECASE
MULTILINE = regex.MULTILINE


class TooCostly(ValueError):
    """The pattern took longer than the limit: it backtracks too much on this text."""


class UserPattern:
    def __init__(self, source: str, flags: int = 0) -> None:
        """Raises ValueError with regex's own message for an invalid pattern."""
        try:
            self._compiled = regex.compile(source, flags | regex.VERSION0)
        except regex.error as exc:
            raise ValueError(f"invalid regular expression {source!r}: {exc}") from exc
        self.source = source

    def deadline(self) -> float:
        return time.monotonic() + SEARCH_LIMIT_S

    def search(self, text: str, deadline: float | None = None) -> regex.Match[str] | None:
        """The first match in `text`; all searches sharing one `deadline` (default: this one alone) may take
        SEARCH_LIMIT_S together, past it this is TooCostly."""
        remaining = (deadline if deadline is not None else self.deadline()) - time.monotonic()
        try:
            return self._compiled.search(text, timeout=max(remaining, 0.001), concurrent=True)
        except TimeoutError as exc:
            raise TooCostly(
                f"the regular expression {self.source!r} took longer than {SEARCH_LIMIT_S} s on {len(text)} "
                "characters: it backtracks too much (nested quantifiers such as (a+)+?); simplify it"
            ) from exc
