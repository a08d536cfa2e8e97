"""Waiting on the server: block until the output or the screen matches, the screen is stable, the state
is one of a set, a command block ends, or the process exits; or until the timeout, which returns a cursor
to resume from."""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from app.core.errors import BadInput
from app.core.patterns import INLINE_COST, MULTILINE, Match, TooCostly, UserPattern, run_bounded
from app.terminal.blocks import Block
from app.terminal.state import STATES
from app.terminal.stream_text import clean_stream

OVERLAP = 4096
"""Bytes of already scanned output scanned again, so a match split across two arrivals is found."""
MAX_SCAN = 8 << 20
"""At most this much output is scanned per check; older output after `since` is skipped."""
INLINE_SCAN = 64 << 10
"""Larger scans (reading, cleaning and searching the output) run in the pattern threads, as do searches
that could cost more than a few milliseconds (see app.core.patterns): the event loop never waits on them."""
POLL_S = 0.05
"""How often conditions without an event (stable_ms, state_in) are checked."""
MIN_RECHECK_S = 0.01


@dataclass(frozen=True, slots=True)
class Until:
    regex: UserPattern | None = None
    on: Literal["stream", "screen"] = "stream"
    stable_ms: int | None = None
    state_in: frozenset[str] = frozenset()
    exit: bool = False
    block_end: bool = False

    @property
    def polls(self) -> bool:
        return self.stable_ms is not None or bool(self.state_in)

    @property
    def empty(self) -> bool:
        return self.regex is None and not self.polls and not self.exit and not self.block_end


def compile_until(
    regex: str | None = None,
    on: Literal["stream", "screen"] = "stream",
    stable_ms: int | None = None,
    state_in: list[str] | None = None,
    exit: bool = False,
    block_end: bool = False,
) -> Until:
    """Validate a wait condition; an invalid regex or an unknown state is a BadInput."""
    pattern = None
    if regex is not None:
        try:
            pattern = UserPattern(regex, MULTILINE)
        except ValueError as exc:
            raise BadInput(str(exc), field="until.regex") from exc
    unknown = sorted(set(state_in or ()) - set(STATES))
    if unknown:
        raise BadInput(f"unknown state(s) {unknown}; valid: {list(STATES)}", field="until.state_in")
    return Until(pattern, on, stable_ms, frozenset(state_in or ()), exit, block_end)


class EndedBlocks(Protocol):
    def ended_after(self, offset: int) -> Block | None:
        """The first command block that ended after journal offset `offset` (see app.terminal.blocks)."""


class Waitable(Protocol):
    """What a wait needs from a terminal."""

    @property
    def raw_offset(self) -> int: ...
    @property
    def exited(self) -> bool: ...
    @property
    def last_output_at(self) -> float: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def blocks(self) -> EndedBlocks: ...

    def read_raw(self, offset: int, limit: int) -> bytes: ...
    def screen_text(self) -> str: ...
    def state(self) -> str: ...
    async def changed(self, timeout: float) -> None: ...


async def wait_until(term: Waitable, until: Until, since: int, timeout_s: float) -> dict[str, Any]:
    """Block until `until` holds (any of its conditions) or `timeout_s` passes."""
    started = time.monotonic()
    deadline = started + timeout_s
    scanned = since
    while True:
        hit = None
        seen = term.raw_offset
        if until.regex is not None and until.on == "stream":
            end = term.raw_offset
            start = max(since, scanned - OVERLAP, end - MAX_SCAN)
            if end - start > INLINE_SCAN or until.regex.cost(end - start) > INLINE_COST:
                found = await run_bounded(_scan_stream, term, until.regex, start, end)
            else:
                found = _scan_stream(term, until.regex, start, end)
            scanned = max(scanned, end)
            if found is not None:
                hit = _result(term, "regex", *found)
        elif until.regex is not None:
            m = await _search_screen(until.regex, term.screen_text())
            if m:
                hit = _result(term, "screen", term.raw_offset, _match_json(m))
        if hit is None and until.block_end:
            block = term.blocks.ended_after(since)
            if block is not None and block.end is not None:  # (a finished block has its end)
                hit = _result(term, "block_end", block.end)
                hit["block"] = {"n": block.n, "exit_code": block.exit_code, "command": block.command}
        if hit is None and until.exit and term.exited:
            hit = _result(term, "exit", term.raw_offset)
        if hit is None and until.state_in and term.state() in until.state_in:
            hit = _result(term, "state", term.raw_offset)
        now = time.monotonic()
        if hit is None and until.stable_ms is not None:
            quiet_since = max(term.last_output_at, started)
            if now - quiet_since >= until.stable_ms / 1000:
                hit = _result(term, "stable", term.raw_offset)
        if hit is not None:
            hit.update(matched=True, elapsed_ms=round((now - started) * 1000))
            return hit
        if term.exited:
            if until.regex is not None and until.on == "stream" and scanned < term.raw_offset:
                continue  # output that arrived while the last scan ran: scan it before giving up
            return _miss(term, "exited", since, scanned, started)
        if now >= deadline:
            return _miss(term, "timeout", since, scanned, started)
        if term.raw_offset != seen:
            continue  # output came while this pass ran (a scan in a thread): its wake-up is already spent
        wait_for = deadline - now
        if until.polls:
            wait_for = min(wait_for, POLL_S)
        await term.changed(wait_for)
        await asyncio.sleep(MIN_RECHECK_S)


def _search(pattern: UserPattern, text: str) -> Match | None:
    """A match, or None; a search over the budget ends the wait with a 400 that says why."""
    try:
        return pattern.search(text)
    except TooCostly as exc:
        raise BadInput(str(exc), field="until.regex") from exc


async def _search_screen(pattern: UserPattern, text: str) -> Match | None:
    """`_search` of the screen's text, off the event loop when it could take a while."""
    try:
        return await pattern.search_off_loop(text)
    except TooCostly as exc:
        raise BadInput(str(exc), field="until.regex") from exc


def _scan_stream(
    term: Waitable, pattern: UserPattern, start: int, end: int
) -> tuple[int, dict[str, Any]] | None:
    """The first match in the output between `start` and `end`: (journal offset of its end, the match)."""
    if start >= end:
        return None
    text = clean_stream(term.read_raw(start, end - start), start)
    m = _search(pattern, text.text)
    if m is None:
        return None
    return text.raw_offset(m.end), _match_json(m)


def _printable(s: str | None) -> str | None:
    """Undecodable bytes (kept as surrogate escapes for exact offsets) shown as U+FFFD."""
    return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if s else s


def _match_json(m: Match) -> dict[str, Any]:
    return {"text": _printable(m.text), "groups": [_printable(g) for g in m.groups]}


def _result(term: Waitable, reason: str, cursor: int, match: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "reason": reason,
        "cursor": cursor,
        "raw_offset": term.raw_offset,
        "state": term.state(),
        "exit_code": term.exit_code,
    }
    if match is not None:
        out["match"] = match
    return out


def _miss(term: Waitable, reason: str, since: int, scanned: int, started: float) -> dict[str, Any]:
    """No match: the cursor lets a next wait resume without rescanning everything (nor missing a match
    that was still arriving)."""
    out = _result(term, reason, max(since, scanned - OVERLAP))
    out.update(matched=False, elapsed_ms=round((time.monotonic() - started) * 1000))
    return out
