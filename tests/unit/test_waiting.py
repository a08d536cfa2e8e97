"""Wait conditions: validation, and the wait loop against a scripted terminal."""
from __future__ import annotations

import asyncio
import time

import pytest

from lookout.core.errors import BadInput
from lookout.core.hands import InputRecord
from lookout.terminal.waits.waiting import INLINE_SCAN, OVERLAP, Origin, compile_until, wait_until
from tests.support.terminals import FakeTerminal


def test_invalid_regex_and_unknown_state_are_bad_input() -> None:
    with pytest.raises(BadInput, match="invalid regular expression"):
        compile_until(regex="(")
    with pytest.raises(BadInput, match="unknown state"):
        compile_until(state_in=["idle", "sleepy"])
    assert compile_until().empty and not compile_until(exit=True).empty


async def test_a_regex_that_would_backtrack_forever_is_answered_at_once() -> None:
    term = FakeTerminal()
    term.write(b"a" * 5000 + b"b\r\n")  # with `re`, (a+)+$ on this line would run for ages
    result = await wait_until(term, compile_until(regex=r"(a+)+$"), 0, 0)
    assert result.matched is False and result.reason == "timeout"
    term.write(b"a" * 5000 + b"\r\n")
    result = await wait_until(term, compile_until(regex=r"(a+)+$"), 0, 30)
    assert result.matched and result.match["text"] == "a" * 5000


def test_patterns_re2_cannot_take_are_bad_input_that_says_why() -> None:
    for pattern, why in [
        ("((a{1000}){1000}){1000}", "nested repeats multiplied together, may be at most 1000"),
        (r"(\w+) \1", "backreferences are not supported"),
        (r"foo(?=bar)", "lookahead and lookbehind are not supported"),
        (r"(\pL{100}\pN){10}", "compiles to more than 2 MiB"),
    ]:
        with pytest.raises(BadInput, match=why):
            compile_until(regex=pattern)


async def test_a_search_over_the_budget_is_bad_input_that_says_why() -> None:
    term = FakeTerminal()
    term.write(b"ab\n" * 100_000)  # RE2's DFA gives up on this pattern: each byte costs every instruction
    with pytest.raises(BadInput, match=r"over the limit of .* instruction-bytes per request: search less text"):
        await wait_until(term, compile_until(regex=r"(?s)a.{999}c"), 0, 30)
    term.screen_model.shown = "ab\n" * 100_000
    with pytest.raises(BadInput, match="over the limit"):
        await wait_until(term, compile_until(regex=r"(?s)a.{999}c", on="screen"), 0, 30)


async def test_regex_arriving_later_is_found_and_cursor_is_its_end() -> None:
    term = FakeTerminal()
    term.write(b"old done\r\n")
    since = term.raw_offset

    async def later() -> None:
        await asyncio.sleep(0.05)
        term.write(b"work\x1b[0m\r\nall do")
        await asyncio.sleep(0.05)
        term.write(b"ne\r\nprompt$ ")

    task = asyncio.create_task(later())
    result = await wait_until(term, compile_until(regex=r"^all done$"), since, 5)
    await task
    assert result.matched and result.reason == "regex"
    assert term.raw[: result.cursor].endswith(b"all done")
    assert result.match["text"] == "all done"


async def test_output_before_since_is_not_matched() -> None:
    term = FakeTerminal()
    term.write(b"target\r\n")
    result = await wait_until(term, compile_until(regex="target"), term.raw_offset, 0.1)
    assert result.matched is False and result.reason == "timeout"
    assert result.cursor == term.raw_offset


async def test_timeout_cursor_keeps_an_overlap() -> None:
    term = FakeTerminal()
    term.write(b"x" * (3 * OVERLAP))
    result = await wait_until(term, compile_until(regex="never"), 0, 0.05)
    assert result.cursor == 2 * OVERLAP


async def test_screen_regex_state_exit_and_stable() -> None:
    term = FakeTerminal()
    term.screen_model.shown = "line one\n$ ready"
    r = await wait_until(term, compile_until(regex=r"^\$ ready", on="screen"), 0, 1)
    assert r.reason == "screen" and r.match["text"] == "$ ready"

    term.current_state = "idle"
    r = await wait_until(term, compile_until(state_in=["idle", "password"]), 0, 1)
    assert r.reason == "state" and r.state == "idle"

    t0 = time.monotonic()
    r = await wait_until(term, compile_until(stable_ms=100), 0, 5)
    assert r.reason == "stable" and time.monotonic() - t0 >= 0.1

    term.exited, term.exit_code = True, 7
    r = await wait_until(term, compile_until(exit=True), 0, 1)
    assert r.reason == "exit" and r.exit_code == 7


async def test_exit_ends_a_wait_that_can_no_longer_match() -> None:
    term = FakeTerminal()
    term.exited = True
    r = await wait_until(term, compile_until(regex="never"), 0, 30)
    assert r.matched is False and r.reason == "exited"


async def test_a_large_backlog_is_scanned_off_the_loop_and_still_found() -> None:
    term = FakeTerminal()
    term.write(b"noise line\r\n" * 200_000 + b"needle here\r\n")
    result = await wait_until(term, compile_until(regex=r"^needle"), 0, 5)
    assert result.matched and term.raw[: result.cursor].endswith(b"needle")


async def test_output_that_lands_with_the_exit_is_still_scanned() -> None:
    class ExitsDuringScan(FakeTerminal):
        """The last output and the exit arrive while a scan is reading the journal."""

        def read_raw(self, offset: int, limit: int) -> bytes:
            data = super().read_raw(offset, limit)
            if not self.exited:
                self.raw += b"final answer\r\n"
                self.exited, self.exit_code = True, 0
            return data

    term = ExitsDuringScan()
    term.write(b"working\r\n")
    result = await wait_until(term, compile_until(regex="^final answer"), 0, 5)
    assert result.matched and result.reason == "regex"


class EdgeTerminal(FakeTerminal):
    """Wakes only waits that are already waiting (as the session's pulse does), and gets its last output
    while the first scan of a wait runs in a thread."""

    def __init__(self) -> None:
        super().__init__()
        self.late: bytes | None = None
        self.loop = asyncio.get_running_loop()
        self.waits = 0

    def read_raw(self, offset: int, limit: int) -> bytes:
        data = super().read_raw(offset, limit)
        if self.late is not None:
            late, self.late = self.late, None
            self.raw += late  # arrives during the scan, and its wake-up fires now, before anyone waits
            self.loop.call_soon_threadsafe(self._event.set)
        return data

    async def changed(self, timeout: float) -> None:
        self.waits += 1
        await asyncio.sleep(0)  # let a wake-up that was already sent land first, and be lost
        self._event.clear()
        await super().changed(timeout)


async def test_output_that_arrives_during_a_scan_is_not_missed() -> None:
    term = EdgeTerminal()
    term.raw = b"x" * (INLINE_SCAN + 1000) + b"\r\n"  # scanned in a thread
    term.late = b"all done\r\n"
    result = await wait_until(term, compile_until(regex=r"all done"), 0, 3)
    assert result.matched and term.waits == 0, "found by the next pass, without waiting for a wake-up"


async def test_a_state_reached_before_the_wait_first_looks_is_an_edge_from_the_state_at_the_input() -> None:
    term = FakeTerminal()  # `sleep 5` + Enter: the command already runs when the wait first looks
    term.current_state = "running"
    after_idle = Origin(since=0, after_input=True, echo="sleep 5", state="idle")
    r = await wait_until(term, compile_until(state_in=["running"]), after_idle, 1)
    assert r.matched and r.reason == "state"
    unchanged = Origin(since=0, after_input=True, echo="sleep 5", state="running")  # no answer to the input yet
    r = await wait_until(term, compile_until(state_in=["running"]), unchanged, 0.3)
    assert not r.matched and r.reason == "timeout"


async def test_a_regex_is_never_met_by_the_echo_of_another_hands_input() -> None:
    """A's wait from its own input; B typed `echo A-B` meanwhile (echoed at once, run later): A's pattern is met
    by A's output only, and the answer names B's input (issue 44)."""
    term = FakeTerminal()
    term.write(b"$ sleep 3; echo A-X\r\n")
    mine = term.ledger.add(InputRecord(seq=0, hand="A", offset=0, at=time.time(), text="A", echo="sleep3;echoA-X",
                                       lines=1))  # fmt: skip
    term.ledger.add(InputRecord(seq=1, hand="B", offset=term.raw_offset, at=time.time(), text="typed `echo A-B⏎`",
                                echo="echoA-B", lines=1))  # fmt: skip
    term.write(b"echo A-B\r\n")  # the terminal's echo of B's typed-ahead line
    origin = Origin(since=0, after_input=True, echo=mine.echo, hand="A", input=0)
    pending = await wait_until(term, compile_until(regex=r"A-\w"), origin, 0.2)
    assert pending.matched is False and [i["hand"] for i in pending.other_hands] == ["B"]
    assert "another hand wrote to this terminal while your call ran: B" in (pending.note or "")
    term.write(b"A-X\r\n$ ")
    found = await wait_until(term, compile_until(regex=r"A-\w"), origin, 5)
    assert found.matched and found.match == {"text": "A-X", "groups": []}
    with_echo = await wait_until(term, compile_until(regex=r"A-\w", echo=True), Origin(since=0, hand="A"), 5)
    assert with_echo.match == {"text": "A-X", "groups": []}  # its own echo, from 0: the first A-X of the line
    theirs = await wait_until(term, compile_until(regex=r"A-B", echo=True), Origin(since=0, hand="A"), 5)
    assert theirs.matched and theirs.match["text"] == "A-B"  # echo: true matches other hands' echo too
