"""What a terminal records in the timeline: input sent, resizes, screens read, commands ended, exits (pure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lookout.core.leases import Lease
from lookout.terminal.blocks.blocks import Block
from lookout.terminal.input.steps import InputStep
from lookout.terminal.screen.frame_screens import view_refs
from lookout.terminal.screen.layers import ScreenData, ViewOptions
from lookout.terminal.waits.stream_text import clean_stream
from lookout.timeline.recording import FrameInput

LINE_CHARS = 120
TAIL_LINES = 5
TAIL_BYTES = 4096
_VISIBLE = {"\r": "⏎", "\n": "↵", "\t": "⇥", "\x1b": "␛", "\x7f": "⌫"}


def resource(terminal_id: str) -> str:
    return f"terminal:{terminal_id}"


def visible(text: str) -> str:
    """Input as an agent reads it back: Enter as ⏎, other control characters as ^X."""
    return "".join(_VISIBLE.get(c) or (f"^{chr(ord(c) + 64)}" if ord(c) < 32 else c) for c in text)


def _cut(text: str, limit: int = LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def input_frame(terminal_id: str, steps: Sequence[InputStep], hidden: bool) -> FrameInput:
    """An input action; input typed while the terminal did not echo (a password prompt) is not recorded."""
    if hidden:
        full = "typed input that is not shown (the terminal was not echoing: a password prompt?)"
        return FrameInput(resource(terminal_id), "action", "terminal input", full, full)
    full = describe_steps(steps)
    return FrameInput(resource(terminal_id), "action", "terminal input", full, _cut(full),
                      data={"action": _cut(full, 60)})  # fmt: skip


def describe_steps(steps: Sequence[InputStep]) -> str:
    """What input did, as an agent reads it back: "typed `ls⏎`; pressed C-c"."""
    parts = []
    for step in steps:
        if step.paste:
            parts.append(f"pasted {len(step.paste)} characters: `{visible(step.paste)}`")
        if step.text:
            parts.append(f"typed `{visible(step.text)}`")
        if step.keys:
            parts.append("pressed " + " ".join(step.keys))
    return "; ".join(parts)


def take_over_frame(terminal_id: str, lease: Lease) -> FrameInput:
    """A hand (a person in the web UI or `lookout attach`) typed into a terminal another hand holds."""
    text = lease.taken_over_line("typed into the terminal")
    return FrameInput(resource(terminal_id), "action", "terminal take-over", text, text, pinned=True,
                      data={"action": "take over"})  # fmt: skip


def resize_frame(terminal_id: str, before: tuple[int, int], after: tuple[int, int]) -> FrameInput:
    """A resize of the terminal (by the agent, a `resize` call, or a person taking the screen over): the frame's
    agent says who changed the screen."""
    text = f"resized the terminal from {before[0]}x{before[1]} to {after[0]}x{after[1]}"
    return FrameInput(resource(terminal_id), "action", "terminal resize", text, text,
                      data={"action": f"resize {after[0]}x{after[1]}"})  # fmt: skip


def screen_frame(
    terminal_id: str, data: ScreenData, facts: dict[str, Any], options: ViewOptions, scrollback: int
) -> FrameInput:
    """A screen read: the text of the screen (trailing blank rows dropped), with its size, cursor and state;
    `facts`: cols, rows, state, title, cwd and raw_size, as the read already knows them. Its refs keep what
    rebuilds the answer (the view asked for, and more: see lookout.terminal.screen.frame_screens)."""
    rows, cursor = list(data.text), (data.cursor.row, data.cursor.col)
    while rows and not rows[-1].strip():
        rows = rows[:-1]
    text = "\n".join(row.rstrip() for row in rows)
    where = f"screen {facts['cols']}x{facts['rows']}, {facts['state']}, cursor row {cursor[0]} col {cursor[1]}"
    cwd = facts.get("cwd")
    title = f", title {facts['title']!r}" if facts.get("title") else ""
    current = rows[cursor[0]].strip() if 0 <= cursor[0] < len(rows) else ""
    last = current or next((r.strip() for r in reversed(rows) if r.strip()), "")
    return FrameInput(
        resource(terminal_id), "observation", "terminal screen",
        f"{where}{title}:\n{text}", _cut(f"{where}: `{last}`"), subject="screen",
        refs={"raw_offset": facts["raw_size"], **view_refs(options, scrollback, data)}, data={"cwd": cwd} if cwd else {},
    )  # fmt: skip


def output_tail(raw: bytes) -> str:
    """The last lines of a command's output as plain text (escapes and carriage returns removed)."""
    lines = [line.rstrip() for line in clean_stream(raw, 0).text.split("\n")]
    return "\n".join(_cut(line, 200) for line in [kept for kept in lines if kept.strip()][-TAIL_LINES:])


def block_tail(block: Block, read_raw: Callable[[int, int], bytes]) -> str:
    """The last lines of a finished block's output (see `output_tail`), read from its last TAIL_BYTES."""
    end = block.end if block.end is not None else block.start
    start = max(block.start, end - TAIL_BYTES)
    return output_tail(read_raw(start, end - start))


def block_label(what: str, block: Block) -> str:
    """The journal's marker for a block that started or ended."""
    label = f"block {block.n} {what}" + (f" (exit {block.exit_code})" if what == "ended" else "")
    return f"{label}: {block.command}"


def block_frame(terminal_id: str, block: Block, tail: str, agent: str) -> FrameInput:
    """A command that ended: its exit code and cwd; a failure is pinned and keeps its last lines."""
    code = block.exit_code
    seconds = f" after {block.duration_ms / 1000:.1f} s" if block.duration_ms is not None else ""
    line = f"`{_cut(block.command, 80)}` exited {code if code is not None else '(unknown)'} in {block.cwd}"
    failed = code not in (0, None)
    full = line + seconds + (f", last lines:\n{tail}" if failed and tail else "")
    return FrameInput(
        resource(terminal_id), "event", "command", full, line, pinned=failed,
        refs={"block": block.n, "raw": {"start": block.start, "end": block.end}}, agent=agent,
        data={"command": block.command, "exit_code": code, "cwd": block.cwd, "tail": tail if failed else ""},
    )  # fmt: skip


def exit_frame(terminal_id: str, exit_code: int | None, stopped: bool, agent: str) -> FrameInput:
    """The terminal's process ended: pinned when it failed on its own, not when lookout stopped it."""
    text = f"the terminal's process exited with code {exit_code}" + (" (closed by lookout)" if stopped else "")
    return FrameInput(resource(terminal_id), "event", "terminal exit", text, text,
                      pinned=not stopped and exit_code not in (0, None), agent=agent)  # fmt: skip
