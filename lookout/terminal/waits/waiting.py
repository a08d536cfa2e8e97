"""Waiting on the server: block until the output or the screen matches, the screen is stable, the state
is one of a set, a command block ends (and its prompt comes), or the process exits (any of these, or all
at once); or until the timeout, which returns a cursor to resume from. After an input, the echo of it is
skipped (lookout.terminal.waits.echo) and a state holds only as the terminal's answer to it."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, Protocol

from lookout.core.errors import BadInput
from lookout.core.hands import Ledger, Standing, notice, notice_line
from lookout.core.patterns import INLINE_COST, MULTILINE, Match, TooCostly, UserPattern, run_bounded
from lookout.terminal.blocks.blocks import Block
from lookout.terminal.process.state import STATES
from lookout.terminal.waits.echo import EchoTracker
from lookout.terminal.waits.hands import HandsWatch
from lookout.terminal.waits.stream_text import clean_stream

OVERLAP = 4096
"""Bytes of already scanned output scanned again, so a match split across two arrivals is found."""
MAX_SCAN = 8 << 20
"""At most this much output is scanned per check; older output after `since` is skipped."""
INLINE_SCAN = 64 << 10
"""Larger scans (reading, cleaning and searching the output) run in the pattern threads, as do searches
that could cost more than a few milliseconds (see lookout.core.patterns): the event loop never waits on them."""
POLL_S = 0.05
"""How often conditions without an event (stable_ms, state_in) are checked."""
MIN_RECHECK_S = 0.01


PROMPT_WAIT_S = 2.0
"""After a command block ends, how long a block_end wait waits for the shell's next prompt (its OSC 133 B
mark, or the shell sleeping in a read of the terminal, which it does only once the prompt is written) so the
screen it returns shows the prompt."""

Reason = Literal["regex", "screen", "stable", "state", "exit", "block_end"]


@dataclass(frozen=True, slots=True)
class Until:
    regex: UserPattern | None = None
    on: Literal["stream", "screen"] = "stream"
    stable_ms: int | None = None
    state_in: frozenset[str] = frozenset()
    exit: bool = False
    block_end: bool = False
    match: Literal["any", "all"] = "any"
    echo: bool = False
    """A stream regex may match the terminal's echo of the input, and that of other hands' inputs (by default
    it is searched after the first and around the others)."""

    @property
    def polls(self) -> bool:
        return self.stable_ms is not None or bool(self.state_in) or self.block_end

    @property
    def empty(self) -> bool:
        return self.regex is None and self.stable_ms is None and not self.state_in and not self.exit \
            and not self.block_end  # fmt: skip

    @property
    def given(self) -> tuple[Reason, ...]:
        """The conditions given, in the order they are checked."""
        out: list[Reason] = []
        if self.regex is not None:
            out.append("regex" if self.on == "stream" else "screen")
        if self.block_end:
            out.append("block_end")
        if self.exit:
            out.append("exit")
        if self.state_in:
            out.append("state")
        if self.stable_ms is not None:
            out.append("stable")
        return tuple(out)


def compile_until(
    regex: str | None = None,
    on: Literal["stream", "screen"] = "stream",
    stable_ms: int | None = None,
    state_in: list[str] | None = None,
    exit: bool = False,
    block_end: bool = False,
    match: Literal["any", "all"] = "any",
    echo: bool = False,
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
    return Until(pattern, on, stable_ms, frozenset(state_in or ()), exit, block_end, match, echo)


@dataclass(frozen=True, slots=True, kw_only=True)
class Origin:
    """Where a wait starts: journal offset `since` and, when the wait follows an input sent there, that
    input's visible characters (`echo`, see lookout.terminal.waits.echo) and the terminal's state just before it was
    sent (a state condition holds only once the terminal has left that state or answered the input)."""

    since: int
    after_input: bool = False
    echo: str = ""
    state: str | None = None
    hand: str | None = None
    """The hand whose wait it is (lookout.core.hands)."""
    input: int | None = None
    """The seq of the hand's input sent at `since` (see lookout.core.hands.InputRecord)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockSummary:
    n: int
    exit_code: int | None
    command: str
    hand: str | None = None
    """Whose the block is (lookout.core.hands; None: lookout cannot tell)."""

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "exit_code": self.exit_code, "command": self.command, "hand": self.hand}


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitResult:
    """How a wait ended. `reason`: the condition that held ("state+stable" when all had to), or timeout or
    exited; `cursor`: the journal offset to pass as `since` to go on from here."""

    matched: bool
    reason: str
    cursor: int
    raw_offset: int
    state: str
    exit_code: int | None
    """The process's exit status once it exited, else that of the command block that ended during the wait."""
    elapsed_ms: int
    match: dict[str, Any] | None = None
    block: BlockSummary | None = None
    prompt: bool | None = None
    """With block_end: whether the shell's next prompt came within PROMPT_WAIT_S."""
    echo_end: int | None = None
    """The journal offset where the echo of the input ended, when one was skipped."""
    standing: Standing | None = None
    """How `block` stands to the caller's input (lookout.core.hands.standing; None without a record of it)."""
    other_hands: list[dict[str, Any]] = field(default_factory=list)
    """Inputs of other hands since the caller's input (lookout.core.hands.notice)."""

    @property
    def note(self) -> str | None:
        """What the caller must know that the fields do not say plainly (one line each)."""
        lines = [line for line in (self._ending_note, notice_line(self.other_hands) if self.other_hands else None)
                 if line]  # fmt: skip
        return "\n".join(lines) or None

    @property
    def _ending_note(self) -> str | None:
        if self.reason == "stopping":
            return f"lookout is stopping; once it serves again, wait again with since={self.cursor}"
        b = self.block
        if b is not None and self.standing == "before":
            whose = b.hand or "a hand lookout cannot tell"
            return (f"your input went into another hand's command: block {b.n} (`{b.command}` of {whose}) was "
                    f"already running when you sent it, and it ended (exit {b.exit_code}); that is not your "
                    "command's exit code")  # fmt: skip
        if b is not None and self.standing == "unknown":
            return (f"block {b.n} (`{b.command}`) ended, but lookout cannot tell whose line started it (several "
                    "hands typed before it): it may not be your command")  # fmt: skip
        if self.prompt is False:
            return f"the command ended but no prompt came within {PROMPT_WAIT_S:g} s; the screen may not show it"
        return None

    def to_json(self) -> dict[str, Any]:
        """Every field (what POST /wait answers), leaving out those that do not apply."""
        out: dict[str, Any] = {
            "matched": self.matched,
            "reason": self.reason,
            "cursor": self.cursor,
            "raw_offset": self.raw_offset,
            "state": self.state,
            "exit_code": self.exit_code,
            "elapsed_ms": self.elapsed_ms,
        }
        if self.match is not None:
            out["match"] = self.match
        if self.block is not None:
            out["block"] = self.block.to_json()
        if self.standing not in (None, "mine"):
            out["standing"] = self.standing
        if self.other_hands:
            out["other_hands"] = self.other_hands
        if self.prompt is not None:
            out["prompt"] = self.prompt
        if self.echo_end is not None:
            out["echo_end"] = self.echo_end
        if self.note:
            out["note"] = self.note
        return out

    def lean_json(self) -> dict[str, Any]:
        """What an act answer carries by default: what ended the wait, the state, the resume cursor, the exit
        code when something ended, and a note when one is due."""
        out: dict[str, Any] = {"ended": self.reason, "state": self.state, "cursor": self.cursor}
        if self.exit_code is not None:
            out["exit_code"] = self.exit_code
        if self.standing not in (None, "mine") and self.block is not None:
            out["standing"], out["block"] = self.standing, self.block.to_json()
        if self.other_hands:
            out["other_hands"] = self.other_hands
        if self.note:
            out["note"] = self.note
        return out


class EndedBlocks(Protocol):
    def ended_after(self, offset: int) -> Block | None:
        """The first command block that ended after journal offset `offset` (see lookout.terminal.blocks.blocks)."""

    def prompt_after(self, offset: int) -> bool:
        """Whether the shell marked the end of a prompt after journal offset `offset`."""


class ScreenText(Protocol):
    def text(self) -> str:
        """The screen's rows, as text."""


class Waitable(Protocol):
    """What a wait needs from a terminal."""

    @property
    def raw_offset(self) -> int: ...
    @property
    def exited(self) -> bool: ...
    @property
    def stopping(self) -> bool:
        """The daemon is stopping: a wait answers now."""

    @property
    def last_output_at(self) -> float: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def blocks(self) -> EndedBlocks: ...
    @property
    def screen_model(self) -> ScreenText: ...
    @property
    def ledger(self) -> Ledger:
        """The terminal's inputs and whose its blocks are (lookout.core.hands)."""

    def read_raw(self, offset: int, limit: int) -> bytes: ...
    def state(self) -> str: ...
    def shell_reading(self) -> bool:
        """Whether the shell is in the foreground and sleeps in a read of the terminal (so its prompt is
        written: a line editor puts the terminal in raw mode before it draws the prompt, so the mode alone
        does not say so)."""

    async def changed(self, timeout: float) -> None: ...
    async def catch_up(self) -> None:
        """Take in every byte the program has written so far."""


class Pulse:
    """Wakes every waiter when something changed: what a terminal's `changed` waits on."""

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None

    async def wait(self, timeout: float) -> None:
        if self._future is None or self._future.done():
            self._future = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except TimeoutError:
            pass

    def fire(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(None)


@dataclass(slots=True)
class _Progress:
    """What a wait learnt so far."""

    origin: Origin
    echo: EchoTracker
    scanned: int
    hands: HandsWatch
    found: tuple[int, dict[str, Any]] | None = None
    first_state: str | None = None
    """The state the wait compares against: the one just before the input (else the one at its first check)."""
    left_state: bool = False
    block: Block | None = None
    block_seen_at: float | None = None
    deadline: float = 0.0


async def wait_until(term: Waitable, until: Until, since: int | Origin, timeout_s: float) -> WaitResult:
    """Block until `until` holds (any of its conditions, or all at once) or `timeout_s` passes.

    After an input (`since` an Origin with after_input), a stream regex is searched after the terminal's
    echo of it (unless until.echo), and a state holds only once the terminal answered the input: it was in
    another state or wrote output past the echo since."""
    origin = since if isinstance(since, Origin) else Origin(since=since)
    started = time.monotonic()
    deadline = started + timeout_s
    skip_echo = origin.after_input and not until.echo
    echo = EchoTracker(origin.since, origin.echo if origin.after_input else "")
    p = _Progress(
        origin, echo, origin.since, HandsWatch(term.ledger, origin.hand, origin.since, origin.input), deadline=deadline
    )
    while True:
        seen = term.raw_offset
        if origin.after_input and (skip_echo or until.state_in):
            await _follow_echo(term, p.echo)
        held: list[Reason] = []
        for condition in until.given:
            if await _holds(term, until, condition, p, skip_echo, started):
                held.append(condition)
        now = time.monotonic()
        if held and (until.match == "any" or len(held) == len(until.given)):
            taken = term.raw_offset
            await term.catch_up()
            if term.raw_offset != taken and not await _still(term, until, held, p, skip_echo, started):
                continue
            return _result(term, p, True, "+".join(held) if until.match == "all" else held[0], started, now)
        if term.exited:
            if until.regex is not None and until.on == "stream" and p.scanned < term.raw_offset:
                continue  # output that arrived while the last scan ran: scan it before giving up
            return _result(term, p, False, "exited", started, now)
        if term.stopping:
            await term.catch_up()
            return _result(term, p, False, "stopping", started, now)
        if now >= deadline:
            await term.catch_up()
            return _result(term, p, False, "timeout", started, now)
        if term.raw_offset != seen:
            continue  # output came while this pass ran (a scan in a thread): its wake-up is already spent
        wait_for = deadline - now
        if until.polls:
            wait_for = min(wait_for, POLL_S)
        await term.changed(wait_for)
        await asyncio.sleep(MIN_RECHECK_S)


async def _follow_echo(term: Waitable, echo: EchoTracker) -> None:
    span = echo.span(term.raw_offset)
    if span <= 0:
        return
    if span > INLINE_SCAN:
        raw = await run_bounded(term.read_raw, echo.since, span)
    else:
        raw = term.read_raw(echo.since, span)
    echo.update(raw)


async def _holds(
    term: Waitable, until: Until, condition: Reason, p: _Progress, skip_echo: bool, started: float
) -> bool:
    """Whether `condition` of `until` holds now (a regex match and a block's end, once seen, stay seen)."""
    if condition == "regex":
        assert until.regex is not None
        if p.found is None:
            end = term.raw_offset
            floor = p.echo.end if skip_echo else p.origin.since
            start = max(floor, p.scanned - OVERLAP, end - MAX_SCAN)
            ranges, end = (
                ([(start, end)], end)
                if until.echo
                else await p.hands.scan_ranges(partial(_follow_echo, term), start, end)
            )
            for first, last in ranges:  # the output but the echo of other hands' inputs (unless until.echo)
                if last - first > INLINE_SCAN or until.regex.cost(last - first) > INLINE_COST:
                    p.found = await run_bounded(_scan_stream, term, until.regex, first, last)
                else:
                    p.found = _scan_stream(term, until.regex, first, last)
                if p.found is not None:
                    break
            p.scanned = max(p.scanned, end)
        return p.found is not None
    if condition == "screen":
        assert until.regex is not None
        m = await _search_screen(until.regex, term.screen_model.text())
        p.found = (term.raw_offset, _match_json(m)) if m else None
        return m is not None
    if condition == "block_end":
        if p.block is None:
            p.block = await p.hands.own_block(term)
            if p.block is None:
                return False
            p.block_seen_at = time.monotonic()
        assert p.block_seen_at is not None
        now = time.monotonic()
        return _prompt_drawn(term, p.block) or now - p.block_seen_at >= PROMPT_WAIT_S or now >= p.deadline
    if condition == "exit":
        return term.exited
    if condition == "state":
        state = term.state()
        if p.first_state is None:
            p.first_state = p.origin.state or state
        p.left_state = p.left_state or state != p.first_state or state not in until.state_in
        return state in until.state_in and (not p.origin.after_input or p.left_state or p.echo.output_after)
    quiet_since = max(term.last_output_at, started)
    assert until.stable_ms is not None
    return time.monotonic() - quiet_since >= until.stable_ms / 1000


async def _still(term: Waitable, until: Until, held: list[Reason], p: _Progress, skip: bool, started: float) -> bool:
    """Whether what held of now (stable, state) holds still after the catch-up before an answer brought output
    its holder had not passed on (a busy program's is read at a pace); asked once, never again and again."""
    now = [c for c in held if c in ("stable", "state")]
    return all([await _holds(term, until, condition, p, skip, started) for condition in now])


def _prompt_drawn(term: Waitable, block: Block) -> bool:
    return term.blocks.prompt_after(block.end or 0) or term.shell_reading()


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


def _scan_stream(term: Waitable, pattern: UserPattern, start: int, end: int) -> tuple[int, dict[str, Any]] | None:
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


def _summary(block: Block, hand: str | None) -> BlockSummary:
    return BlockSummary(n=block.n, exit_code=block.exit_code, command=block.command, hand=hand)


def _result(term: Waitable, p: _Progress, matched: bool, reason: str, started: float, now: float) -> WaitResult:
    """The answer. The cursor: after a stream match, its end; without a match, where a next wait can resume
    without rescanning everything (nor missing a match that was still arriving); else the output's end."""
    if not matched:
        cursor = max(p.origin.since, p.scanned - OVERLAP)
    elif "regex" in reason and p.found is not None:
        cursor = p.found[0]
    elif reason == "block_end" and p.block is not None:
        cursor = p.block.end or term.raw_offset
    else:
        cursor = term.raw_offset
    block, standing = (p.block, p.hands.standing) if p.block is not None else p.hands.first_mine(term)
    own = block is not None and standing in (None, "mine")
    exit_code = term.exit_code if term.exited else (block.exit_code if block is not None and own else None)
    owner = term.ledger.owner(block.n) if block is not None else None
    return WaitResult(
        matched=matched,
        reason=reason,
        cursor=cursor,
        raw_offset=term.raw_offset,
        state=term.state(),
        exit_code=exit_code,
        elapsed_ms=round((now - started) * 1000),
        match=p.found[1] if matched and p.found is not None and reason != "block_end" else None,
        block=_summary(block, owner.hand if owner is not None else None) if block else None,
        prompt=_prompt_drawn(term, p.block) if p.block is not None and "block_end" in reason else None,
        echo_end=p.echo.end if p.echo.found else None,
        standing=standing,
        other_hands=notice(p.hands.others()),
    )
