"""Many hands on one terminal: who sent each input, and the one rule of whose a command block is (pure).

A hand is the agent name of a request (lookout.timeline.recording.current_agent): an agent's `X-Lookout-Agent`, the
web UI's "web-ui", `lookout attach`'s own name, or "default". Every input to a terminal is an `InputRecord`:
its hand, the journal offset where it was written, its time, a preview of its text, its visible characters
(what its echo is made of) and how many command lines it submits (its Enters).

The rule, declared here and nowhere else (tmux interleaves keys the same way but never claims whose command
ended; lookout claims it, so it must be right or say it cannot tell):

- A command block belongs to the input that carried its command line. The shell reads command lines in the
  order they were typed, so a block (at its OSC 133 C mark) takes the earliest input written before that mark
  that still has a line the shell has not read, or, when one of them holds the command's text, the earliest
  that does (the lines before it were then read by a running program, never by the shell).
- A block already running when an input arrives was not started by it (the block starts before the input).
- An input typed while a command runs (typeahead) is read by the shell once that command ends: it starts the
  next block, and is answered as the caller's own only then.
- When the inputs that may have carried a line are of several hands and none holds the command's text, the
  block's hand is unknown (None) and every answer about it says so.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import Any, Literal

PREVIEW_CHARS = 60
"""Characters of an input's text kept as its preview."""
STORED_ECHO_CHARS = 1024
"""Visible characters of an input kept in its record (what the echo of another hand's input is found by)."""
NOTICE_MAX = 5
"""At most this many inputs of other hands are listed in one answer (the newest; `more` counts the rest)."""

Standing = Literal["mine", "before", "later", "unknown"]
"""How a command block that ended after a caller's input stands to that input (see `standing`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InputRecord:
    """One input: `seq` counts the terminal's inputs from 0; `offset` the journal offset it was written at;
    `at` Unix time; `text` a preview; `echo` its visible characters; `lines` the command lines it submits."""

    seq: int
    hand: str
    offset: int
    at: float
    text: str
    echo: str = ""
    lines: int = 0

    def to_json(self) -> dict[str, Any]:
        """A line of the terminal's inputs.jsonl."""
        return {"seq": self.seq, "hand": self.hand, "offset": self.offset, "at": self.at, "text": self.text,
                "echo": self.echo[:STORED_ECHO_CHARS], "lines": self.lines}  # fmt: skip

    @classmethod
    def from_json(cls, data: Any) -> InputRecord | None:
        """The record a line holds, or None when it is not one."""
        if not isinstance(data, dict):
            return None
        seq, hand, offset, at = data.get("seq"), data.get("hand"), data.get("offset"), data.get("at")
        text, echo, lines = data.get("text", ""), data.get("echo", ""), data.get("lines", 0)
        ints = all(type(v) is int and v >= 0 for v in (seq, offset, lines))
        if not ints or not isinstance(hand, str) or type(at) not in (int, float):
            return None
        if not isinstance(text, str) or not isinstance(echo, str):
            return None
        return cls(seq=seq, hand=hand, offset=offset, at=float(at), text=text, echo=echo, lines=lines)  # type: ignore[arg-type]

    def notice(self) -> dict[str, Any]:
        """How an answer names it (the `other_hands` field)."""
        return {"hand": self.hand, "at": self.at, "raw_offset": self.offset, "text": self.text}


@dataclass(frozen=True, slots=True)
class Owner:
    """Whose a block is: `hand` (None: lookout cannot tell) and the input that carried its line (`input`, its
    seq; None when no input of this daemon's record did: a line typed before lookout kept records)."""

    hand: str | None
    input: int | None


def submitted_lines(data: bytes) -> int:
    """How many command lines the bytes of an input submit (its carriage returns and line feeds; CR LF is one)."""
    data = data.replace(b"\r\n", b"\n")
    return data.count(b"\n") + data.count(b"\r")


def preview(text: str) -> str:
    """An input as answers show it (the caller describes it: "typed `ls⏎`"), cut short."""
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _visible(command: str) -> str:
    return "".join(c for c in command if c.isprintable() and not c.isspace())


@dataclass(slots=True)
class Ledger:
    """The inputs of one terminal and the blocks they started (see the module's rule)."""

    inputs: list[InputRecord] = field(default_factory=list)
    _unread: dict[int, tuple[InputRecord, int]] = field(default_factory=dict)
    """Inputs (by seq) with command lines the shell has not read, and how many: oldest first (inputs come in
    order, and a count is changed in place), so a claim reads only as far as it must."""
    _owners: dict[int, Owner] = field(default_factory=dict)
    _claimed: dict[int, list[int]] = field(default_factory=dict)
    """Blocks (by n) each input (by seq) started."""
    _last: dict[str, InputRecord] = field(default_factory=dict)

    @property
    def next_seq(self) -> int:
        return self.inputs[-1].seq + 1 if self.inputs else 0

    def add(self, record: InputRecord) -> InputRecord:
        """Take an input, sent after every one taken before (records out of order are ignored); the record as
        taken: one said to be written before the input taken last (what the daemon had read of the journal
        lags behind it after a restart) is written at that input's offset at the earliest."""
        if self.inputs and record.seq <= self.inputs[-1].seq:
            return record
        if self.inputs and record.offset < self.inputs[-1].offset:
            record = replace(record, offset=self.inputs[-1].offset)
        self.inputs.append(record)
        self._last[record.hand] = record
        if record.lines:
            self._unread[record.seq] = (record, record.lines)
        return record

    def last_of(self, hand: str) -> InputRecord | None:
        """The hand's last input."""
        return self._last.get(hand)

    def claim(self, n: int, start: int, command: str) -> Owner:
        """Block `n`, started at journal offset `start` with command line `command`: whose it is (see the
        module's rule). Blocks are claimed in the order they start; claiming one again answers the same."""
        if n in self._owners:
            return self._owners[n]
        key = _visible(command)
        earliest: InputRecord | None = None
        matching: InputRecord | None = None
        hands: set[str] = set()
        for record, _ in self._unread.values():  # those written before the block, up to the first with its text
            if record.offset >= start:
                break  # (and so is every later one)
            earliest = earliest or record
            hands.add(record.hand)
            if key and key in record.echo:
                matching = record
                break
        chosen, known = (matching, True) if matching is not None else (earliest, len(hands) == 1)
        if chosen is None:
            owner = self._owners[n] = Owner(None, None)
            return owner
        while (first := next(iter(self._unread))) < chosen.seq:
            del self._unread[first]  # read before this line, by a program
        left = self._unread[chosen.seq][1] - 1
        if left:
            self._unread[chosen.seq] = (chosen, left)  # (in place: the order stays)
        else:
            del self._unread[chosen.seq]
        self._claimed.setdefault(chosen.seq, []).append(n)
        owner = self._owners[n] = Owner(chosen.hand if known else None, chosen.seq)
        return owner

    def owner(self, n: int) -> Owner | None:
        """Whose block `n` is (None: it was not claimed, it started before lookout kept records)."""
        return self._owners.get(n)

    def started_by(self, seq: int) -> list[int]:
        """The blocks input `seq` started."""
        return self._claimed.get(seq, [])

    def others(self, hand: str, after: InputRecord | None, since: int = 0) -> list[InputRecord]:
        """Inputs of other hands than `hand` sent after `after` (when given), else written at or after journal
        offset `since`."""
        if after is not None:
            i = bisect.bisect_right(self.inputs, after.seq, key=lambda r: r.seq)
        else:
            i = bisect.bisect_left(self.inputs, since, key=lambda r: r.offset)
        return [r for r in self.inputs[i:] if r.hand != hand]


def standing(block_n: int, block_start: int, owner: Owner | None, mine: InputRecord) -> Standing:
    """How a block that ended after the caller's input `mine` stands to it: "mine" (its line came in `mine`, or
    it is a command of the same hand that was running when `mine` was written: the hand's keys went to its own
    command); "before" (another hand's command, or one of a hand lookout cannot tell, was running when `mine`
    was written: `mine` went into it, or was typed ahead and runs after it); "later" (a command started after
    `mine` by another input: not an answer to `mine`); "unknown" (started after `mine`, by a line lookout cannot
    tie to a hand)."""
    if owner is not None and owner.input == mine.seq:
        return "mine"
    if block_start <= mine.offset:
        return "mine" if owner is not None and owner.hand == mine.hand else "before"
    if owner is None or owner.hand is None:
        return "unknown"
    return "later"


def notice(records: list[InputRecord]) -> list[dict[str, Any]]:
    """The `other_hands` field of an answer: the newest inputs of other hands, at most NOTICE_MAX (each
    {hand, at, raw_offset, text})."""
    return [r.notice() for r in records[-NOTICE_MAX:]]


WHILE_CALL = "while your call ran"
"""When the inputs of an `act` or `wait` answer's `other_hands` came."""
SINCE_INPUT = "since your last input"
"""When the inputs of a screen read's `other_hands` came."""


def notice_line(other_hands: list[dict[str, Any]], when: str = WHILE_CALL) -> str:
    """One line of text for the `other_hands` field (what the MCP text shows); `when`: WHILE_CALL or
    SINCE_INPUT."""
    hands = ", ".join(sorted({str(i.get("hand")) for i in other_hands}))
    last = other_hands[-1].get("text", "") if other_hands else ""
    return f"another hand wrote to this terminal {when}: {hands} (last: {last!r})"
