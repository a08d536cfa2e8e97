"""What a wait follows of a terminal's other hands (lookout.core.hands): which command block that ended answers the
caller's own input, which output is the echo of another hand's input (never a match of the caller's regex), and
which inputs of other hands came while the wait ran."""

from __future__ import annotations

import time
from typing import Protocol

from lookout.core.hands import InputRecord, Ledger, Standing, standing
from lookout.terminal.blocks.blocks import Block
from lookout.terminal.waits.echo import EchoTracker
from lookout.timeline.recording import DEFAULT_AGENT

SETTLE_S = 2.0
"""How long after another hand's command ended a wait gives the shell to read the caller's typed-ahead line
before it answers that the line went into that command (the shell sleeping in a read of the terminal without
having started the line says so sooner)."""

ECHO_WAIT_S = 1.0
"""How long after another hand's input its echo may still be arriving (the output after it is searched once it
has, or once this passed: a program that does not echo does not hold the search up)."""


class EchoReader(Protocol):
    async def __call__(self, echo: EchoTracker) -> None: ...


class Ended(Protocol):
    def ended_after(self, offset: int) -> Block | None: ...


class Shared(Protocol):
    """What a watch needs from a terminal (a part of lookout.terminal.waits.waiting.Waitable)."""

    @property
    def blocks(self) -> Ended: ...
    def shell_reading(self) -> bool: ...
    async def catch_up(self) -> None: ...


class HandsWatch:
    """One wait's view of the hands: `mine`, the caller's input the wait follows (None for a wait from a given
    offset, or an input lookout has no record of)."""

    def __init__(self, ledger: Ledger, hand: str | None, since: int, input_seq: int | None) -> None:
        """A wait of `hand` from journal offset `since`, where its input `input_seq` was sent (if it was)."""
        self.ledger = ledger
        self.hand = hand or DEFAULT_AGENT
        self.since = since
        self.mine: InputRecord | None = None
        if input_seq is not None:
            record = ledger.last_of(self.hand)
            if record is not None and record.seq == input_seq:
                self.mine = record
        self.standing: Standing | None = None
        """How the block found by `own_block` stands to `mine`."""
        self._after = since
        self._before_seen_at: float | None = None
        self._echoes: dict[int, EchoTracker] = {}

    def others(self) -> list[InputRecord]:
        """Inputs of other hands after `mine` (or written after the wait's start offset)."""
        return self.ledger.others(self.hand, self.mine, self.since)

    async def own_block(self, term: Shared) -> Block | None:
        """The block that ended and answers the caller's input: its own (standing "mine"), or another hand's that
        was running when the input came and took it ("before"), or one lookout cannot tie to a hand
        ("unknown"); blocks of later inputs of other hands are passed over. None while there is none yet."""
        mine = self.mine
        while (block := term.blocks.ended_after(self._after)) is not None:
            st: Standing = "mine" if mine is None else standing(block.n, block.start, self.ledger.owner(block.n), mine)
            if st == "later" or (st == "before" and mine is not None and self.ledger.started_by(mine.seq)):
                self._after = block.end or self._after  # not an answer to it, or its line was typed ahead
                continue
            if st == "before" and mine is not None and mine.lines and not await self._line_not_read(term, mine):
                return None  # the shell may yet read the typed-ahead line
            self.standing = None if mine is None else st
            return block
        return None

    async def _line_not_read(self, term: Shared, mine: InputRecord) -> bool:
        """After another hand's command ended: whether the shell went back to reading without taking the line
        `mine` typed (it was read by that command), or SETTLE_S passed without it."""
        now = time.monotonic()
        if self._before_seen_at is None:
            self._before_seen_at = now
        if not term.shell_reading() and now - self._before_seen_at < SETTLE_S:
            return False
        await term.catch_up()  # a line the shell read is marked (its C mark) before it reads again
        return not self.ledger.started_by(mine.seq)

    def first_mine(self, term: Shared) -> tuple[Block | None, Standing | None]:
        """For a wait that ended otherwise: the first block that ended after the input and is the caller's
        (without a record of the input: the first that ended after the start offset)."""
        after = self.since
        while (block := term.blocks.ended_after(after)) is not None:
            if self.mine is None:
                return block, None
            if standing(block.n, block.start, self.ledger.owner(block.n), self.mine) == "mine":
                return block, "mine"
            after = block.end or after
        return None, None

    async def scan_ranges(self, read_echo: EchoReader, start: int, end: int) -> tuple[list[tuple[int, int]], int]:
        """The parts of the output from `start` to `end` a stream regex is searched in: all but the echo of other
        hands' inputs (which may still be arriving: the search then stops where it started). Returns the parts
        and how far the search got."""
        ranges: list[tuple[int, int]] = []
        at, reached = start, end
        for record in self.others():
            if record.offset >= end:
                break
            if not record.echo:
                continue
            echo = self._echoes.get(record.seq)
            if echo is None:
                echo = self._echoes[record.seq] = EchoTracker(record.offset, record.echo)
            await read_echo(echo)
            if not echo.settled and time.time() - record.at < ECHO_WAIT_S:
                reached = min(reached, max(record.offset, start))
                break
            if echo.end <= at or not echo.found:
                continue
            if echo.start > at:
                ranges.append((at, echo.start))
            at = max(at, echo.end)
        if at < reached:
            ranges.append((at, reached))
        return ranges, reached
