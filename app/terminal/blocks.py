"""Command blocks: one per command line run at a prompt of an integrated shell, built from its marks.

A block starts at the shell's OSC 133 C mark (output start; the OSC 633 E mark just before it names the
command line) and ends at its 133 D mark, which carries the exit status. Only marks whose last parameter is
the session's nonce count (see app.terminal.shell_integration); others are ignored and counted as forged.

Block JSON: {n, command, cwd, started_at, ended_at, duration_ms, exit_code, raw: {start, end}} where n
counts from 1, times are Unix seconds, and raw is the output's range of journal offsets (from the end of
the C mark to the start of the D mark). A running block has ended_at, duration_ms, exit_code and raw.end
null. Finished blocks are appended to `blocks.jsonl` in the session's directory.
"""
from __future__ import annotations

import asyncio
import bisect
from pathlib import Path
from typing import Any, Protocol

from app.core.storage import append_jsonl, iter_jsonl
from app.terminal.block_output import render_output
from app.terminal.persistence import TerminalMeta
from app.terminal.scanner import ShellMark
from app.terminal.shell_integration import nonce_option

BLOCKS_FILE = "blocks.jsonl"


class BlockTracker:
    """The blocks of one session: those finished (loaded from blocks.jsonl, then appended to it) and the
    running one. Fed with the session's shell marks in stream order."""

    def __init__(self, directory: Path, nonce: str | None) -> None:
        """`nonce`: the live session's shell integration nonce; None (no integration, or a session of an
        earlier run) takes no marks."""
        self._path = directory / BLOCKS_FILE
        self._genuine = nonce_option(nonce) if nonce else None
        self._done: list[dict[str, Any]] = list(iter_jsonl(self._path))
        self._running: dict[str, Any] | None = None
        self._command: str | None = None  # from the E mark since the last C mark
        self._prompt_end = -1  # journal offset of the last B mark (the prompt is drawn)
        self.forged = 0
        self.failure: str | None = None

    def trusts_cwd(self, nonce: str | None) -> bool:
        """Whether a cwd report counts: any report without shell integration, else only the shell's own
        (its nonce'd mark), so a program cannot make its commands appear to run elsewhere."""
        return self._genuine is None or nonce == self._genuine

    def feed(self, mark: ShellMark, offset: int, at: float, cwd: str) -> list[tuple[str, dict[str, Any]]]:
        """Take a mark that ends at journal `offset`, read at Unix time `at` while the shell's cwd was `cwd`;
        returns what happened: ("started" | "ended", block) pairs."""
        if self._genuine is None:
            return []
        if not mark.params or mark.params[-1] != self._genuine:
            self.forged += 1
            return []
        happened: list[tuple[str, dict[str, Any]]] = []
        if mark.code == "E":
            self._command = mark.params[0] if len(mark.params) > 1 else ""
        elif mark.code == "C":
            if self._running is not None and self._command is None:
                return []  # the same C again (zsh can write its output twice when a signal ends it)
            unfinished = self.close(offset - _length(mark), at, None)  # a block whose D mark never came
            if unfinished is not None:
                happened.append(("ended", unfinished))
            self._running = {
                "n": self._done[-1]["n"] + 1 if self._done else 1,
                "command": self._command or "",
                "cwd": cwd,
                "started_at": at,
                "ended_at": None,
                "duration_ms": None,
                "exit_code": None,
                "raw": {"start": offset, "end": None},
            }
            self._command = None
            happened.append(("started", self._running))
        elif mark.code == "B":
            self._prompt_end = offset
        elif mark.code == "D":
            ended = self.close(offset - _length(mark), at, _exit_code(mark.params[:-1]))
            if ended is not None:
                happened.append(("ended", ended))
        return happened

    def close(self, end: int, at: float, exit_code: int | None) -> dict[str, Any] | None:
        """End the running block (if any) at journal offset `end`; returns it, unless it was an empty
        cycle (no command, no output, no exit status: what some shells emit for Ctrl-C at a prompt), which
        is dropped. The session closes a block that is still running when the shell exits with the
        shell's exit status."""
        block, self._running = self._running, None
        if block is None:
            return None
        if not block["command"] and end <= block["raw"]["start"] and exit_code is None:
            return None
        block.update(ended_at=at, duration_ms=round((at - block["started_at"]) * 1000), exit_code=exit_code)
        block["raw"]["end"] = end
        try:
            append_jsonl(self._path, block)
        except OSError as exc:  # kept in memory; a full disk must not stop the session
            self.failure = f"writing blocks.jsonl failed: {exc.strerror}"
        self._done.append(block)
        return block

    @property
    def current(self) -> dict[str, Any] | None:
        """The running block."""
        return self._running

    def describe(self) -> dict[str, Any]:
        """What the terminal object says about blocks."""
        return {"block": self._running, "block_count": len(self._done), "forged_marks": self.forged}

    def finished(self, since: int | None = None, last: int | None = None) -> list[dict[str, Any]]:
        """Finished blocks, oldest first: those numbered above `since`, the last `last` of them."""
        start = 0 if since is None else bisect.bisect_right(self._done, since, key=lambda b: b["n"])
        blocks = self._done[start:]
        return blocks[-last:] if last is not None else blocks

    def get(self, n: int) -> dict[str, Any] | None:
        """Block `n`, finished or running."""
        if self._running is not None and self._running["n"] == n:
            return self._running
        i = bisect.bisect_left(self._done, n, key=lambda b: b["n"])
        return self._done[i] if i < len(self._done) and self._done[i]["n"] == n else None

    def prompt_after(self, offset: int) -> bool:
        """Whether the shell finished drawing a prompt (its B mark) after journal offset `offset`."""
        return self._prompt_end > offset

    def ended_after(self, offset: int) -> dict[str, Any] | None:
        """The first block that ended after journal offset `offset`."""
        i = bisect.bisect_right(self._done, offset, key=lambda b: b["raw"]["end"])
        return self._done[i] if i < len(self._done) else None


class BlockSource(Protocol):
    """What reading a block's output needs from a terminal."""

    blocks: BlockTracker
    meta: TerminalMeta

    @property
    def raw_offset(self) -> int: ...

    def read_raw(self, offset: int, limit: int) -> bytes: ...


async def block_with_output(source: BlockSource, n: int, max_tokens: int) -> dict[str, Any] | None:
    """Block `n` with `output`: its rendered text within `max_tokens` (see app.terminal.block_output; for
    a running block, the output so far). None if there is no such block."""
    block = source.blocks.get(n)
    if block is None:
        return None
    block = {**block, "raw": dict(block["raw"])}
    start, end = block["raw"]["start"], block["raw"]["end"]
    meta = source.meta
    output = await asyncio.to_thread(
        render_output, source.read_raw, start, source.raw_offset if end is None else end,
        meta.engine, meta.cols, meta.rows, max_tokens,
    )
    return {**block, "output": output}


def _exit_code(params: tuple[str, ...]) -> int | None:
    try:
        return int(params[0])
    except (IndexError, ValueError):
        return None


def _length(mark: ShellMark) -> int:
    """The length of a genuine OSC 133 mark as the shell hooks write it (ESC ] 133 ; ... BEL)."""
    return len(f"\x1b]133;{';'.join((mark.code, *mark.params))}\x07".encode())
