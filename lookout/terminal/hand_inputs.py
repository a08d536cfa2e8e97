"""The hands of one terminal (lookout.core.hands): every input recorded with its hand and the journal offset it was
written at (`inputs.jsonl`, one InputRecord a line, kept across restarts), each hand's last input (what its
waits start from, in `last_input.json`), and whose each command block is.

`last_input.json` keeps the fields older daemons read (the last input of any hand: since, after_input, echo,
state) and adds `hand`, `input` (its seq) and `hands`: each hand's last input in the same form."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from lookout.core.hands import InputRecord, Ledger, Owner, notice, preview, submitted_lines
from lookout.core.storage import append_jsonl, iter_jsonl
from lookout.terminal import frames
from lookout.terminal.blocks.blocks import Block, BlockTracker
from lookout.terminal.input.steps import EncodedInput, InputStep
from lookout.terminal.journal import persistence as files
from lookout.terminal.waits.waiting import Origin
from lookout.timeline.recording import DEFAULT_AGENT

INPUTS_FILE = "inputs.jsonl"


class TerminalHands:
    """The inputs of one terminal and whose its blocks are."""

    def __init__(self, directory: Path, writes: files.GuardedWrites) -> None:
        self.directory = directory
        self.writes = writes
        self.ledger = Ledger()
        self.last = Origin(since=0)
        """The last input of any hand."""
        self.by_hand: dict[str, Origin] = {}
        self.stopped_by: str | None = None
        """The hand that asked for the program to end (DELETE), if one did."""

    def record(
        self, hand: str, offset: int, steps: Sequence[InputStep], encoded: EncodedInput, hidden: bool, state: str
    ) -> Origin:
        """An input of `hand` written at journal offset `offset` (`hidden`: the terminal did not echo it: its
        text is not kept); `state`: the terminal's just before. Returns where a wait after it starts."""
        described = "(not shown: the terminal was not echoing)" if hidden else frames.describe_steps(steps)
        echo = "" if hidden else encoded.echo
        record = InputRecord(seq=self.ledger.next_seq, hand=hand, offset=offset, at=time.time(),
                             text=preview(described), echo=echo, lines=submitted_lines(encoded.data))  # fmt: skip
        record = self.ledger.add(record)
        self.writes(INPUTS_FILE, append_jsonl, self.directory / INPUTS_FILE, record.to_json())
        origin = Origin(since=offset, after_input=True, echo=echo, state=state, hand=hand, input=record.seq)
        self.last = self.by_hand[hand] = origin
        saved = {**asdict(origin), "hands": {name: asdict(o) for name, o in self.by_hand.items()}}
        self.writes("last_input.json", files.save_last_input, self.directory, saved)
        return origin

    def origin(self, hand: str) -> Origin:
        """Where a wait of `hand` without `since` starts: its own last input; the start of the output when it sent
        none (the last input of any hand when an older daemon, which kept no hands, sent it)."""
        if hand in self.by_hand:
            return self.by_hand[hand]
        return replace(self.last, hand=hand, input=None) if not self.by_hand else Origin(since=0, hand=hand)

    def since_own(self, hand: str) -> list[dict[str, Any]]:
        """The inputs of other hands since `hand`'s own last input (lookout.core.hands.notice: what a screen
        read answers in `other_hands`); none for a hand that sent no input (nothing on the screen is its own)."""
        mine = self.ledger.last_of(hand)
        return notice(self.ledger.others(hand, mine)) if mine is not None else []

    def claim(self, block: Block) -> Owner:
        """Whose a block that started is (see lookout.core.hands)."""
        return self.ledger.claim(block.n, block.start, block.command)

    def with_hand(self, block: dict[str, Any]) -> dict[str, Any]:
        """A block's JSON with `hand`: the hand whose input carried its command line; null when lookout cannot
        tell (another hand's command was running, or the line was typed before lookout kept records)."""
        owner = self.ledger.owner(block["n"])
        return {**block, "hand": owner.hand if owner is not None else None}

    def hand_of(self, block: Block) -> str:
        """The hand a block's frames are credited to: its owner's, DEFAULT_AGENT when lookout cannot tell."""
        owner = self.ledger.owner(block.n)
        return owner.hand if owner is not None and owner.hand is not None else DEFAULT_AGENT

    def exit_hand(self, blocks: BlockTracker) -> str:
        """The hand the program's end is credited to: the one that stopped it, else the one whose command ended
        it (the last block: `exit` is one), else the one that sent the last input."""
        if self.stopped_by is not None:
            return self.stopped_by
        last = blocks.finished(last=1)
        return self.hand_of(last[0]) if last else self.last.hand or DEFAULT_AGENT

    def take_up(self, size: int, blocks: BlockTracker) -> None:
        """Take up what an earlier run of the daemon recorded (inputs within this journal of `size` bytes, each
        hand's last input) and claim the blocks it knows again, in order (the rule gives the same owners)."""
        for line in iter_jsonl(self.directory / INPUTS_FILE):
            record = InputRecord.from_json(line)
            if record is not None and record.offset <= size:
                self.ledger.add(record)
        saved = files.load_last_input(self.directory)
        if saved is not None:
            self.last = origin_of(saved, size) or self.last
            hands = saved.get("hands")
            for name, value in hands.items() if isinstance(hands, dict) else ():
                origin = origin_of(value, size) if isinstance(value, dict) else None
                if origin is not None:
                    self.by_hand[str(name)] = origin
        for block in (*blocks.finished(), *((blocks.current,) if blocks.current is not None else ())):
            self.claim(block)


def origin_of(saved: dict[str, Any], size: int) -> Origin | None:
    """An input as `record` saved it, if it is one of this journal of `size` bytes."""
    since, echo, state = saved.get("since"), saved.get("echo"), saved.get("state")
    if not isinstance(since, int) or not 0 <= since <= size or not isinstance(echo, str):
        return None
    hand, seq = saved.get("hand"), saved.get("input")
    return Origin(since=since, after_input=saved.get("after_input") is True, echo=echo,
                  state=state if isinstance(state, str) else None, hand=hand if isinstance(hand, str) else None,
                  input=seq if type(seq) is int else None)  # fmt: skip
