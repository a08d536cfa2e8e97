"""A terminal's files as a replay archive brings them (lookout.core.archive), checked where they enter, before
anything serves them: a damaged or forged archive is refused with the file and the reason, instead of making a
screen engine of a size it cannot take or reading a journal's hole as output."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from lookout.core.errors import BadInput
from lookout.core.storage import read_json
from lookout.terminal.holder.sizes import check_size, parse_size
from lookout.terminal.journal.persistence import MAX_RECORD_BYTES, load_meta
from lookout.terminal.journal.reader import indexed_size, read_kind

TERMINALS = "terminals"
"""The terminals' folder of a data dir (and so of an archive)."""


def check_range(into: Path, name: str, start: int, length: int) -> None:
    """(lookout.core.archive.RangeCheck) Only a terminal's journal is stored from an offset, and only from one where
    the archive rebuilds the screen (0, or the offset of one of its checkpoints, unpacked before the journal as
    lookout writes them), within the journal its index describes."""
    parts = PurePosixPath(name).parts
    if len(parts) != 3 or parts[0] != TERMINALS or parts[2] != "output.raw":
        raise BadInput(f"the archive stores {name!r} from offset {start}: only a terminal's journal "
                       f"({TERMINALS}/<id>/output.raw) may be stored from an offset")  # fmt: skip
    if start == 0:
        return
    directory = into / TERMINALS / parts[1]
    if not (directory / "checkpoints" / f"{start:016d}.json").is_file():
        raise BadInput(f"{name} is stored from offset {start}, where no checkpoint of the archive (before it) "
                       "rebuilds the screen")  # fmt: skip
    claimed = indexed_size(directory)
    if start > claimed:
        raise BadInput(f"{name} is stored from offset {start}, past the end of the journal its index describes "
                       f"({claimed} bytes)")  # fmt: skip


def check_terminal(directory: Path) -> None:
    """BadInput naming the file and what is wrong with a terminal's files: meta.json must be a terminal's
    record, and its size, every resize of output.idx and every checkpoint's size one a terminal can have."""
    where = f"{TERMINALS}/{directory.name}"
    try:
        load_meta(directory)
    except (OSError, ValueError, TypeError) as exc:
        raise BadInput(f"{where}/meta.json is not a terminal's record: {exc}") from None
    for entry in read_kind(directory, "r"):
        try:
            parse_size(entry.value)
        except ValueError as exc:
            raise BadInput(f"{where}/output.idx: the resize at offset {entry.offset}: {exc}") from None
    for path in sorted((directory / "checkpoints").glob("*.json")):
        try:
            cp = read_json(path, MAX_RECORD_BYTES)
            check_size(cp.get("cols"), cp.get("rows"))
            if not (path.stem.isdigit() and cp.get("offset") == int(path.stem) and isinstance(cp.get("dump"), str)):
                raise ValueError("not a checkpoint (offset, size and dump)")
        except (OSError, ValueError, AttributeError) as exc:
            raise BadInput(f"{where}/checkpoints/{path.name}: {exc}") from None
