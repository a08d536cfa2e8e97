"""Regular expressions that agents send, in RE2's syntax (google-re2), compiled and searched within bounds.

RE2 matches in time linear in the text and compiles within a memory budget: a pattern that would expand
to a huge program (`((a{1000}){1000}){1000}`) is refused in microseconds, and nothing backtracks
(`(a+)+$` is as cheap as `a+$`). Linear is not small: a search costs up to about (program instructions)
x (bytes searched) steps when RE2's DFA runs out of memory, so every search is charged against a budget of
such steps and refused past it. Searches whose cost could hold the event loop for more than a few
milliseconds run in a small thread pool (RE2 releases the GIL while it matches). Bench: bench/patterns.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import re2

from lookout.core.workers import BoundedPool

IGNORECASE = 1
MULTILINE = 2
_FLAG_PREFIX = {IGNORECASE: "i", MULTILINE: "m"}

MAX_PROGRAM_MEM = 2 << 20
"""RE2's memory budget for one compiled pattern (its program and its DFA caches)."""
SEARCH_BUDGET = 500_000_000
"""Steps (program instructions x bytes searched) all the searches of one request, or of one pass of a
wait, may take together: a few seconds in the worst case on a slow core, in a worker thread."""
INLINE_COST = 2_000_000
"""Searches that cost at most this many steps (a few milliseconds at worst) run where they are called."""
WORKERS = 2
"""Threads for the larger searches (and the scans around them): more hostile requests queue, not run."""
SYNTAX_HELP = (
    "patterns use RE2 syntax (https://github.com/google/re2/wiki/Syntax): Python's syntax without "
    "backreferences and lookaround, counted repeats up to {1000} (nested repeats multiply), "
    f"at most {MAX_PROGRAM_MEM >> 20} MiB compiled"
)

_pool = BoundedPool("patterns", WORKERS)


class TooCostly(ValueError):
    """Searching this much text with this pattern is over the budget."""


@dataclass(slots=True)
class Budget:
    """Search steps left; several searches (the lines of a tree, the fields of its nodes) share one."""

    remaining: int = SEARCH_BUDGET


@dataclass(frozen=True, slots=True)
class Match:
    """A match in a str: its text, its groups (None when a group took no part) and where it ends."""

    text: str
    groups: tuple[str | None, ...]
    end: int
    """Character offset of its end in the searched text."""


class UserPattern:
    def __init__(self, source: str, flags: int = 0) -> None:
        """Raises ValueError saying why RE2 cannot take the pattern and what it takes."""
        prefix = "".join(letter for flag, letter in _FLAG_PREFIX.items() if flags & flag)
        options = re2.Options()
        options.max_mem = MAX_PROGRAM_MEM
        options.log_errors = False
        try:
            self._compiled = re2.compile(f"(?{prefix}){source}" if prefix else source, options)
        except re2.error as exc:
            reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            reason = reason.replace(f"(?{prefix}){source}", source) if prefix else reason
            raise ValueError(f"invalid regular expression {source!r}: {_explain(reason)}; {SYNTAX_HELP}") from exc
        except UnicodeEncodeError as exc:
            raise ValueError(f"invalid regular expression {source!r}: it is not valid Unicode text") from exc
        self.source = source
        self.program_size = max(1, self._compiled.programsize)

    def cost(self, n_bytes: int) -> int:
        return self.program_size * max(1, n_bytes)

    def search(self, text: str, budget: Budget | None = None) -> Match | None:
        """The first match in `text` (undecodable bytes kept as surrogate escapes are matched as bytes);
        its cost is taken from `budget` (default: a budget of its own), past it this is TooCostly."""
        data = text.encode("utf-8", "surrogateescape")
        budget = budget if budget is not None else Budget()
        cost = self.cost(len(data))
        if cost > budget.remaining:
            raise TooCostly(
                f"searching {len(data)} bytes with the regular expression {self.source!r} ({self.program_size} "
                f"RE2 instructions) is over the limit of {SEARCH_BUDGET:,} instruction-bytes per request: "
                "search less text (a later `since`, a region) or simplify the pattern"
            )
        budget.remaining -= cost
        m = self._compiled.search(data)
        if m is None:
            return None
        start, end = m.span()
        return Match(
            text=_decode(data[start:end]),
            groups=tuple(None if g is None else _decode(g) for g in m.groups()),
            end=len(_decode(data[:end])),
        )

    async def search_off_loop(self, text: str, budget: Budget | None = None) -> Match | None:
        """`search`, in the pattern threads when it could take more than a few milliseconds."""
        if self.cost(4 * len(text)) <= INLINE_COST:  # at most 4 bytes a character
            return self.search(text, budget)
        return await run_bounded(self.search, text, budget)


async def run_bounded(fn: Any, *args: Any) -> Any:
    """Run `fn(*args)` in the pattern threads (at most WORKERS at once; the rest wait their turn)."""
    return await _pool.run(fn, *args)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _explain(reason: str) -> str:
    """RE2's reason, with what to do for the constructs it lacks or the sizes it refuses."""
    if reason.startswith("invalid escape sequence: \\") and reason[-1:].isdigit():
        return f"{reason} (backreferences are not supported: RE2 matches in linear time)"
    if reason.startswith(tuple(f"invalid perl operator: {op}" for op in ("(?=", "(?!", "(?<=", "(?<!"))):
        return f"{reason} (lookahead and lookbehind are not supported: RE2 matches in linear time)"
    if reason == "invalid escape sequence: \\Z":
        return f"{reason} (write \\z for the end of the text)"
    if reason.startswith("invalid repetition size"):
        return f"{reason} (a counted repeat, or nested repeats multiplied together, may be at most 1000)"
    if "too large" in reason:
        return f"{reason} (it compiles to more than {MAX_PROGRAM_MEM >> 20} MiB: simplify it)"
    return reason
