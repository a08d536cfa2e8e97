"""Every size that enters lookout is checked where it enters, with the API's limits (lookout.terminal.holder.sizes;
issue 35, item 1): the screen engines refuse what would abort or exhaust the process, and the daemon's own
files (output.idx, checkpoints, meta.json) are checked where they are read."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lookout.core.errors import BackendFailure, Gone
from lookout.schemas.terminal import CreateTerminal, Resize
from lookout.terminal.holder.journal import JournalWriter, open_journal
from lookout.terminal.holder.sizes import MAX_COLS, MAX_ROWS, MIN_SIZE
from lookout.terminal.journal.persistence import TerminalMeta, latest_checkpoint, load_meta, save_checkpoint, save_meta
from lookout.terminal.journal.reader import read_index
from lookout.terminal.journal.recording import asciicast
from lookout.terminal.screen.engines import ENGINE_NAMES, create_engine
from lookout.terminal.screen.replay import screen_at

REFUSED = [(0, 0), (80, 0), (0, 24), (1, 24), (80, 1), (70000, -1), (65535, 65535), (MAX_COLS + 1, 24), (80, MAX_ROWS + 1)]


def test_the_api_takes_the_holders_limits() -> None:
    for model in (CreateTerminal, Resize):
        cols, rows = model.model_fields["cols"].metadata, model.model_fields["rows"].metadata
        assert {m.ge for m in cols if hasattr(m, "ge")} == {MIN_SIZE} == {m.ge for m in rows if hasattr(m, "ge")}
        assert {m.le for m in cols if hasattr(m, "le")} == {MAX_COLS} and {m.le for m in rows if hasattr(m, "le")} == {
            MAX_ROWS
        }


@pytest.mark.parametrize("engine", ENGINE_NAMES)
@pytest.mark.parametrize(("cols", "rows"), REFUSED)
def test_engines_refuse_a_size_out_of_range_before_the_emulator_sees_it(engine: str, cols: int, rows: int) -> None:
    with pytest.raises(ValueError, match="is outside|not two integers"):
        create_engine(engine, cols, rows, 100)
    live = create_engine(engine, 80, 24, 100)
    live.feed(b"still here")
    with pytest.raises(ValueError, match="is outside|not two integers"):
        live.resize(cols, rows)
    assert (live.cols, live.rows) == (80, 24) and live.row_text(0) == "still here"


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_engines_take_the_extremes_of_the_range(engine: str) -> None:
    screen = create_engine(engine, MIN_SIZE, MIN_SIZE, 0)
    screen.resize(MAX_COLS, MAX_ROWS)
    assert (screen.cols, screen.rows) == (MAX_COLS, MAX_ROWS)


def _terminal(tmp_path: Path, engine: str = "avt") -> tuple[Path, TerminalMeta]:
    directory = tmp_path / "t_0123456789"
    directory.mkdir()
    meta = TerminalMeta(id=directory.name, name="sh", command="sh", argv=["sh"], cwd="/", cols=20, rows=4,
                        engine=engine, shell=True)  # fmt: skip
    save_meta(directory, meta)
    journal = JournalWriter(*open_journal(directory), 1 << 20)
    journal.record("r", "20x4")
    journal.write_output(b"first line\r\n")
    journal.close()
    return directory, meta


def _append_record(directory: Path, record: list[object]) -> None:
    with (directory / "output.idx").open("a") as f:
        f.write(json.dumps(record) + "\n")


@pytest.mark.parametrize("record", [[1.0, "r", 12, "0x0"], [1.0, "r", 12, "80x0"], [1.0, "r", 12, "65535x65535"],
                                    [1.0, "r", 12, "70000x-1"], [1.0, "r", 12, 80]])  # fmt: skip
def test_a_recording_through_a_damaged_resize_record_is_refused_whole(tmp_path: Path, record: list[object]) -> None:
    directory, meta = _terminal(tmp_path)
    _append_record(directory, record)
    with pytest.raises(Gone, match="resize"):
        asciicast(directory, meta)


@pytest.mark.parametrize("size", ["0x0", "80x0", "65535x65535"])
def test_a_past_screen_after_a_damaged_resize_record_is_refused_never_built(tmp_path: Path, size: str) -> None:
    directory, meta = _terminal(tmp_path)
    _append_record(directory, [1.0, "r", 12, size])
    with pytest.raises(Gone, match="resize"):
        screen_at(directory, meta, 12, 0)


def test_a_torn_last_line_is_still_skipped(tmp_path: Path) -> None:
    directory, _ = _terminal(tmp_path)
    with (directory / "output.idx").open("a") as f:
        f.write('[1.0,"r",12,"0x')
    assert [e.kind for e in read_index(directory)] == ["r", "o"]


@pytest.mark.parametrize("engine", ENGINE_NAMES)
@pytest.mark.parametrize(("cols", "rows"), [(0, 0), (80, 0), (65535, 65535), ("80", 24)])
def test_a_damaged_checkpoint_is_passed_over_for_the_journal(tmp_path: Path, engine: str, cols: object, rows: object) -> None:
    directory, meta = _terminal(tmp_path, engine)
    truth = screen_at(directory, meta, 12, 0).engine.text_rows()
    save_checkpoint(directory, 12, 20, 4, "\x1b[HFORGED", {}, "")
    forged = (directory / "checkpoints" / f"{12:016d}.json")
    forged.write_text(json.dumps({**json.loads(forged.read_text()), "cols": cols, "rows": rows}))
    assert latest_checkpoint(directory, 12) is None, "passed over"
    past = screen_at(directory, meta, 12, 0)
    assert past.engine.text_rows() == truth and truth[0] == "first line"


@pytest.mark.parametrize(("field", "value", "why"), [
    ("cols", 0, "size 0x4"), ("rows", 0, "size 20x0"), ("cols", 65535, "size 65535x4"), ("rows", -1, "size 20x-1"),
    ("pid", "1; rm", "pid"), ("pid", 0, "pid"), ("id", "../../etc", "terminal id"), ("argv", "sh", "argv"),
    ("status", "zombie", "status"), ("created_at", "yesterday", "created_at"),
])  # fmt: skip
def test_a_damaged_meta_json_is_refused_with_what_is_wrong(tmp_path: Path, field: str, value: object, why: str) -> None:
    directory, _ = _terminal(tmp_path)
    meta = json.loads((directory / "meta.json").read_text())
    (directory / "meta.json").write_text(json.dumps({**meta, field: value}))
    with pytest.raises(ValueError, match=why):
        load_meta(directory)


def test_an_engine_that_fails_while_rebuilding_is_an_error_that_says_so(tmp_path: Path) -> None:
    directory, meta = _terminal(tmp_path)
    meta.engine = "xterm"  # a meta.json naming an engine this lookout does not have
    with pytest.raises(BackendFailure, match="xterm screen engine failed .* unknown screen engine") as failed:
        screen_at(directory, meta, 12, 0)
    assert failed.value.status == 502
