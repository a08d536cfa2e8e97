"""Checkpoints at every byte of real curses streams: wherever a checkpoint is taken (lookout.terminal.screen.sequence_boundary
chooses its offset, the engine's dump is its content), the screen rebuilt from it and the journal after it
is the live screen, cell for cell, with both engines (a checkpoint inside `ESC[21;42` once gave a stray H)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lookout.terminal.screen.engines import ENGINE_NAMES, create_engine
from lookout.terminal.screen.engines.base import ScreenEngine
from lookout.terminal.screen.sequence_boundary import cut_before
from tests.support.captures import CAPTURES, COLS, EMOJI_TEXT, ROWS

STEP = 256
"""The live screen is compared at every STEP bytes; a checkpoint at offset k is replayed to the next of them."""


def _state(engine: ScreenEngine) -> tuple[object, ...]:
    cursor = engine.cursor()
    cells = tuple(tuple(engine.row_cells(row)) for row in range(engine.rows))
    return cells, (cursor.row, cursor.col, cursor.visible), engine.alt_screen


@pytest.mark.parametrize("engine_name", ENGINE_NAMES)
@pytest.mark.parametrize(("capture", "length"), [("vim", None), ("htop", 3000)])
def test_a_checkpoint_at_any_byte_rebuilds_the_live_screen(
    capture: str, length: int | None, engine_name: str, tmp_path: Path
) -> None:
    """Every byte of vim's capture, and of the first `length` bytes of htop's (its first screen: a dump per
    byte of the whole would take pyte minutes)."""
    program, record = CAPTURES[capture]
    assert shutil.which(program), f"{program} is not installed (make system-deps installs it)"
    (tmp_path / "emoji.txt").write_text(EMOJI_TEXT)
    stream = record(tmp_path)[:length]
    assert stream.count(b"\x1b[") > 100, "a curses stream, dense with sequences"
    live = create_engine(engine_name, COLS, ROWS, 0)
    checkpoints: list[tuple[int, int, str, dict[str, object]]] = []  # (taken at, cut, dump, kept)
    undecided = 0
    wrong = []
    for k in range(1, len(stream) + 1):
        live.feed(stream[k - 1 : k])
        cut = cut_before(lambda offset, size: stream[offset : offset + size], k, 0)
        if cut is None:
            undecided += 1
        else:
            assert k - cut < 64, f"a cut {k - cut} bytes back at {k}"
            checkpoints.append((k, cut, live.dump(), live.kept_state()))
        if k % STEP and k != len(stream):
            continue
        expected = _state(live)
        for taken, at, dump, kept in checkpoints:
            rebuilt = create_engine(engine_name, COLS, ROWS, 0)
            rebuilt.restore(dump, kept)
            rebuilt.feed(stream[at:k])
            if _state(rebuilt) != expected:
                wrong.append((taken, at, stream[max(0, at - 8) : taken + 8]))
        checkpoints.clear()
    assert not wrong, f"{len(wrong)} of {len(stream)} checkpoints rebuild another screen, e.g. {wrong[:3]}"
    assert undecided < len(stream) // 100, f"{undecided} offsets without a cut"
