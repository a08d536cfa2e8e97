"""A command's output as an agent wants to read it: rendered as a terminal shows it, runs of identical
lines folded, and cut to a token budget that keeps its head and its tail.

The bytes are replayed through a fresh screen engine of the terminal's size, so carriage-return redraws
(progress bars, spinners) leave only their final state and escape sequences leave no trace. Memory stays
bounded whatever the output's length: the replay engine's scrollback is collected and the engine restarted
from a dump of its screen before the scrollback can fill, and only as many lines are kept from each end as
the budget could ever show.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from lookout.core.budget import fit, within
from lookout.core.tokens import count_tokens
from lookout.terminal.screen.engines import create_engine

HARVEST_LINES = 1000
"""Scrollback of the replay engine. Output is fed in pieces that scroll at most half of it, and the lines
that scrolled off are collected after each piece."""
HEAD_WINDOW = 1 << 20
TAIL_WINDOW = 4 << 20
"""Longer outputs are rendered from their first HEAD_WINDOW and last TAIL_WINDOW bytes only."""
FOLD_MIN = 3
"""Runs of at least this many identical lines are shown as one line."""
HEAD_SHARE = 1 / 3
"""Share of the budget for the head of a cut output; the tail (where errors and results are) gets the rest."""
MARKER_TOKENS = 16
"""Budget reserved for the line that says what was cut."""

Read = Callable[[int, int], bytes]
"""read(offset, limit): output bytes from the journal."""


def render_output(
    read: Read, start: int, end: int, engine: str, cols: int, rows: int, max_tokens: int
) -> dict[str, Any]:
    """The output between journal offsets `start` and `end` as text of at most `max_tokens` tokens:
    {text, tokens, lines (rendered lines in all), omitted_lines, truncated}."""
    size = end - start
    if size <= HEAD_WINDOW + TAIL_WINDOW:
        runs = fold_repeats(replay_lines(read(start, size), engine, cols, rows))
        head = list(islice(runs, max_tokens))
        tail, middle = _last(runs, max_tokens)
        skipped = 0
    else:
        head_runs = fold_repeats(replay_lines(read(start, HEAD_WINDOW), engine, cols, rows))
        head = list(islice(head_runs, max_tokens))
        middle = sum(count for _, count in head_runs)
        data = read(end - TAIL_WINDOW, TAIL_WINDOW)
        data = data[data.find(b"\n") + 1 :]  # start at a line start, not inside a character or a sequence
        tail, dropped = _last(fold_repeats(replay_lines(data, engine, cols, rows)), max_tokens)
        middle += dropped
        skipped = size - HEAD_WINDOW - len(data)
    text, omitted = fit_tokens(head, tail, middle, skipped, max_tokens)
    lines = sum(count for _, count in head) + sum(count for _, count in tail) + middle
    return {
        "text": text,
        "tokens": count_tokens(text),
        "lines": lines,
        "omitted_lines": omitted,
        "truncated": bool(omitted or skipped),
    }


def replay_lines(data: bytes, engine: str, cols: int, rows: int) -> Iterator[str]:
    """The lines `data` leaves on a fresh terminal of that size, in order: those that scrolled off, then
    the screen without its blank bottom rows."""
    screen = create_engine(engine, cols, rows, HARVEST_LINES)
    for piece in _pieces(data, cols):
        screen.feed(piece)
        if screen.alt_screen:
            continue  # a full-screen program: its screen is not output, and scrolls nothing off
        scrolled = screen.scrollback(HARVEST_LINES)
        if scrolled:
            yield from scrolled
            dump, kept = screen.dump(), screen.kept_state()
            screen = create_engine(engine, cols, rows, HARVEST_LINES)
            screen.restore(dump, kept)
    lines = screen.text_rows()
    while lines and not lines[-1]:
        lines.pop()
    yield from lines


def fold_repeats(lines: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Runs of identical lines, as (line, run length)."""
    previous, count = "", 0
    for line in lines:
        if count and line == previous:
            count += 1
            continue
        if count:
            yield previous, count
        previous, count = line, 1
    if count:
        yield previous, count


def fit_tokens(
    head: list[tuple[str, int]], tail: list[tuple[str, int]], middle: int, skipped: int, max_tokens: int
) -> tuple[str, int]:
    """Text of at most `max_tokens` tokens from the runs at the start (`head`) and end (`tail`) of an
    output whose `middle` lines and `skipped` bytes between them are already left out; returns the text and
    how many lines it omits in all. What is cut is replaced by one marker line. The head gets HEAD_SHARE of
    the budget, the tail what is left, then the head again; when the text is over all the same (the costs
    are estimated per line), the head's lines go first."""
    runs = head + tail
    shown = [_show(line, count) for line, count in runs]
    cut = bool(middle or skipped)  # the runs already have a hole between head and tail: keep it there
    if not cut:
        text = "\n".join(shown)
        if count_tokens(text) <= max_tokens:
            return text, 0
    cost = [count_tokens(line) + 1 for line in shown]
    head_end = len(head) if cut else len(runs)  # the head's lines come from runs[:head_end],
    tail_start = len(head) if cut else 0  # the tail's from runs[tail_start:]
    budget = max_tokens - MARKER_TOKENS
    i = within(cost[:head_end], math.floor(budget * HEAD_SHARE))
    budget -= sum(cost[:i])
    t = within(reversed(cost[max(i, tail_start) :]), budget)
    budget -= sum(cost[len(runs) - t :])
    i += within(cost[i : min(len(runs) - t, head_end)], budget)

    def measure(k: int) -> tuple[tuple[str, int], int]:
        """The first max(k - t, 0) lines and the last min(k, t): backing off, the head goes first."""
        start, end = max(k - t, 0), len(runs) - min(k, t)
        omitted = middle + sum(count for _, count in runs[start:end])
        text = "\n".join([*shown[:start], _marker(omitted, skipped), *shown[end:]])
        return (text, omitted), count_tokens(text)

    return fit(measure, max_tokens, i + t).value


def _show(line: str, count: int) -> str:
    return f"{line}  [repeated {count} times]" if count >= FOLD_MIN else "\n".join([line] * count)


def _marker(lines: int, skipped: int) -> str:
    cut = [f"{lines} lines"] if lines or not skipped else []
    if skipped:
        cut.append(f"{skipped} bytes")
    return f"[... {' and '.join(cut)} omitted ...]"


def _last(runs: Iterator[tuple[str, int]], keep: int) -> tuple[list[tuple[str, int]], int]:
    """The last `keep` runs, and how many lines the runs before them held."""
    tail: deque[tuple[str, int]] = deque()
    dropped = 0
    for run in runs:
        if len(tail) == keep:
            dropped += tail.popleft()[1]
        tail.append(run)
    return list(tail), dropped


def _pieces(data: bytes, cols: int) -> Iterator[bytes]:
    """`data` cut into pieces that scroll at most HARVEST_LINES // 2 lines each (a quarter in newlines, a
    quarter in wrapped rows), at line ends where possible; so even output that a full-screen program
    interrupts (which defers a collection) never overflows the replay engine's scrollback."""
    quarter = HARVEST_LINES // 4
    pos, size = 0, len(data)
    while pos < size:
        stop = min(size, pos + quarter * cols)
        newline = pos - 1
        for _ in range(quarter):
            newline = data.find(b"\n", newline + 1, stop)
            if newline < 0:
                break
        else:
            stop = newline + 1
        if stop < size:
            last = data.rfind(b"\n", pos, stop)
            if last >= 0:
                stop = last + 1
            else:
                while stop > pos + 1 and data[stop] & 0xC0 == 0x80:  # not inside a UTF-8 character
                    stop -= 1
        yield data[pos:stop]
        pos = stop
