"""Command blocks: one per command line run at a prompt of an integrated shell, built from its marks.

A block starts at the shell's OSC 133 C mark (output start; the OSC 633 E mark just before it names the
command line) and ends at its 133 D mark, which carries the exit status. Only genuine marks count: the shell
writes the session's nonce as their last parameter (see lookout.terminal.process.shell_integration), and the holder
records where each genuine one is (lookout.terminal.holder.nonce); others are ignored and counted as forged. A
block's times are when the holder journaled its marks, not when a daemon read them.

A block is a frozen `Block`; its JSON form (`Block.to_json`, what the API returns and `blocks.jsonl` holds)
is {n, command, cwd, started_at, ended_at, duration_ms, exit_code, raw: {start, end}} where n counts from 1,
times are Unix seconds, and raw is the output's range of journal offsets (from the end of the C mark to the
start of the D mark). A running block has ended_at, duration_ms, exit_code and raw.end null. Finished
blocks are appended to `blocks.jsonl` in the session's directory.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from lookout.core.storage import append_jsonl, iter_jsonl
from lookout.terminal.blocks.output import render_output
from lookout.terminal.journal.persistence import GuardedWrites, TerminalMeta
from lookout.terminal.screen.scanner import ShellMark

log = logging.getLogger(__name__)

BLOCKS_FILE = "blocks.jsonl"


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """One command line run at a prompt; `start` and `end` are the journal offsets of its output."""

    n: int
    command: str
    cwd: str
    started_at: float
    start: int
    ended_at: float | None = None
    duration_ms: int | None = None
    exit_code: int | None = None
    end: int | None = None

    def ended(self, end: int, at: float, exit_code: int | None) -> Block:
        """This block, ended at journal offset `end` at Unix time `at`."""
        duration_ms = round((at - self.started_at) * 1000)
        return replace(self, ended_at=at, duration_ms=duration_ms, exit_code=exit_code, end=end)

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "command": self.command,
            "cwd": self.cwd,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": self.duration_ms,
            "exit_code": self.exit_code,
            "raw": {"start": self.start, "end": self.end},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Block:
        raw = data["raw"]
        return cls(
            n=data["n"], command=data["command"], cwd=data["cwd"], started_at=data["started_at"],
            ended_at=data["ended_at"], duration_ms=data["duration_ms"], exit_code=data["exit_code"],
            start=raw["start"], end=raw["end"],
        )  # fmt: skip


class BlockTracker:
    """The blocks of one session: those finished (loaded from blocks.jsonl, then appended to it) and the
    running one. Fed with the session's shell marks in stream order."""

    def __init__(self, directory: Path, marked: bool, writes: GuardedWrites) -> None:
        """`marked`: whether the terminal's shell has lookout's integration (without it no mark counts);
        `writes`: the terminal's writes, through which blocks.jsonl is appended (none once another daemon took
        the terminal over; a failure keeps the block in memory)."""
        self._path = directory / BLOCKS_FILE
        self._writes = writes
        self.marked = marked
        """Whether the shell's marks count (it was started with lookout's integration and its nonce)."""
        self._done = _load(self._path)
        self._running: Block | None = None
        self._command: str | None = None  # from the E mark since the last C mark
        self._prompt_end = -1  # journal offset of the last B mark (the prompt is drawn)
        self.forged = 0

    def trusts_cwd(self, genuine: bool) -> bool:
        """Whether a cwd report counts: any report without shell integration, else only the shell's own
        (a genuine mark), so a program cannot make its commands appear to run elsewhere."""
        return not self.marked or genuine

    def feed(self, mark: ShellMark, offset: int, at: float | None, cwd: str) -> list[tuple[str, Block]]:
        """Take a mark that ends at journal `offset`, journaled at Unix time `at` (None: not a genuine mark)
        while the shell's cwd was `cwd`; returns what happened: ("started" | "ended", block) pairs."""
        if not self.marked:
            return []
        if at is None:
            self.forged += 1
            return []
        if self._done and self._done[-1].end is not None and offset - _length(mark) <= self._done[-1].end:
            return []  # read again after a restart: that block is stored already
        happened: list[tuple[str, Block]] = []
        if mark.code == "E":
            self._command = mark.params[0] if len(mark.params) > 1 else ""
        elif mark.code == "C":
            if self._running is not None and self._command is None:
                return []  # the same C again (zsh can write its output twice when a signal ends it)
            unfinished = self.close(offset - _length(mark), at, None)  # a block whose D mark never came
            if unfinished is not None:
                happened.append(("ended", unfinished))
            n = self._done[-1].n + 1 if self._done else 1
            self._running = Block(n=n, command=self._command or "", cwd=cwd, started_at=at, start=offset)
            self._command = None
            happened.append(("started", self._running))
        elif mark.code == "B":
            self._prompt_end = offset
        elif mark.code == "D":
            ended = self.close(offset - _length(mark), at, _exit_code(mark.params[:-1]))
            if ended is not None:
                happened.append(("ended", ended))
        return happened

    def close(self, end: int, at: float, exit_code: int | None) -> Block | None:
        """End the running block (if any) at journal offset `end`; returns it, unless it was an empty
        cycle (no command, no output, no exit status: what some shells emit for Ctrl-C at a prompt), which
        is dropped. The session closes a block that is still running when the shell exits with the
        shell's exit status."""
        running, self._running = self._running, None
        if running is None:
            return None
        if not running.command and end <= running.start and exit_code is None:
            return None
        block = running.ended(end, at, exit_code)
        self._writes(BLOCKS_FILE, append_jsonl, self._path, block.to_json())
        self._done.append(block)
        return block

    def state(self) -> dict[str, Any]:
        """What the tracker knows besides blocks.jsonl (kept in the screen snapshot), for `restore`."""
        running = self._running.to_json() if self._running is not None else None
        return {"running": running, "command": self._command, "prompt_end": self._prompt_end, "forged": self.forged}

    def restore(self, state: dict[str, Any]) -> None:
        """Take up where a tracker of an earlier run of the daemon was when it saved `state`."""
        running = state.get("running")
        if running is not None:
            block = Block.from_json(running)
            if not self._done or block.n > self._done[-1].n:
                self._running = block
        command = state.get("command")
        self._command = command if isinstance(command, str) else None
        self._prompt_end = int(state.get("prompt_end", -1))
        self.forged = int(state.get("forged", 0))

    @property
    def current(self) -> Block | None:
        """The running block."""
        return self._running

    def describe(self) -> dict[str, Any]:
        """What the terminal object says about blocks."""
        running = self._running.to_json() if self._running is not None else None
        return {"block": running, "block_count": len(self._done), "forged_marks": self.forged}

    def finished(self, since: int | None = None, last: int | None = None) -> list[Block]:
        """Finished blocks, oldest first: those numbered above `since`, the last `last` of them."""
        start = 0 if since is None else bisect.bisect_right(self._done, since, key=lambda b: b.n)
        blocks = self._done[start:]
        return blocks[-last:] if last is not None else blocks

    def get(self, n: int) -> Block | None:
        """Block `n`, finished or running."""
        if self._running is not None and self._running.n == n:
            return self._running
        i = bisect.bisect_left(self._done, n, key=lambda b: b.n)
        return self._done[i] if i < len(self._done) and self._done[i].n == n else None

    def prompt_after(self, offset: int) -> bool:
        """Whether the shell finished drawing a prompt (its B mark) after journal offset `offset`."""
        return self._prompt_end > offset

    def ended_after(self, offset: int) -> Block | None:
        """The first block that ended after journal offset `offset`."""
        i = bisect.bisect_right(self._done, offset, key=lambda b: b.end or 0)  # finished: end is set
        return self._done[i] if i < len(self._done) else None


class BlockSource(Protocol):
    """What reading a block's output needs from a terminal."""

    blocks: BlockTracker
    meta: TerminalMeta

    @property
    def raw_offset(self) -> int: ...

    def read_raw(self, offset: int, limit: int) -> bytes: ...


async def block_with_output(source: BlockSource, n: int, max_tokens: int) -> dict[str, Any] | None:
    """Block `n` (JSON) with `output`: its rendered text within `max_tokens` (see lookout.terminal.blocks.output;
    for a running block, the output so far). None if there is no such block."""
    block = source.blocks.get(n)
    if block is None:
        return None
    meta = source.meta
    output = await asyncio.to_thread(
        render_output,
        source.read_raw,
        block.start,
        source.raw_offset if block.end is None else block.end,
        meta.engine,
        meta.cols,
        meta.rows,
        max_tokens,
    )
    return {**block.to_json(), "output": output}


def _load(path: Path) -> list[Block]:
    """The blocks stored in `path`; a line that is not a block is skipped (as iter_jsonl skips torn ones)."""
    blocks = []
    for record in iter_jsonl(path):
        try:
            blocks.append(Block.from_json(record))
        except (KeyError, TypeError):
            log.warning("%s: skipping a line that is not a block: %.200r", path, record)
    return blocks


def _exit_code(params: tuple[str, ...]) -> int | None:
    try:
        return int(params[0])
    except (IndexError, ValueError):
        return None


def _length(mark: ShellMark) -> int:
    """The length of a genuine OSC 133 mark as the shell hooks write it (ESC ] 133 ; ... BEL)."""
    return len(f"\x1b]133;{';'.join((mark.code, *mark.params))}\x07".encode())
