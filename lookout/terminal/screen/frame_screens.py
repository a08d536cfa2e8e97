"""A screen read shown again: what the frame of a screen read records besides its journal offset (the view the
agent asked for, and what the answer was made of that a replay cannot know), and that very view rebuilt from
the journal, so that a frame gives back what its answer gave the agent, layer by layer.

The refs of such a frame (see lookout.terminal.frames.screen_frame):
- `raw_offset`: the journal offset the screen reflected;
- `view`: the options asked for (`ViewOptions.to_json`: layers always, then what differs from the defaults:
  region, around_cursor, compact, encoding, max_tokens, format), and `scrollback` when lines were asked for;
- `answer`: `state` and `delta_cursor` as the answer gave them, `changed_rows` (the rows a `changed_since`
  read returned) and `scrollback_lines` (how many lines of scrollback the screen had to give).

A frame recorded before frames kept their view has only `raw_offset`: it is shown with the default layers,
and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookout.core.archive import ArchivePart
from lookout.core.errors import BadInput
from lookout.terminal.journal.persistence import TerminalMeta, latest_checkpoint
from lookout.terminal.screen.layers import ScreenData, ViewOptions, render
from lookout.terminal.screen.replay import screen_at
from lookout.terminal.screen.view import screen_data

SCROLLBACK_REACH = 8 << 20
"""How far before a frame's offset the journal is replayed when the nearest checkpoint leaves too few lines of
scrollback (a checkpoint holds the view only): the most a frame with scrollback costs to show again."""
NO_VIEW_NOTE = (
    "this frame was recorded before lookout kept the view the agent asked for: it is shown with the default "
    "layers (text, cursor), which may not be what the agent was given"
)


def view_refs(options: ViewOptions, scrollback: int, data: ScreenData) -> dict[str, Any]:
    """`view` and `answer` of the frame of a read of `data` rendered with `options` (and `scrollback` lines)."""
    view = options.to_json()
    if scrollback:
        view["scrollback"] = scrollback
    answer = {key: data.extra[key] for key in ("state", "delta_cursor") if key in data.extra}
    if data.scrollback:
        answer["scrollback_lines"] = len(data.scrollback)
    if data.changed_rows is not None:
        answer["changed_rows"] = sorted(data.changed_rows)
    return {"view": view, "answer": answer}


@dataclass(frozen=True, slots=True)
class Recorded:
    """The parts of a frame's refs that rebuild its screen."""

    offset: int
    options: ViewOptions
    lines: int
    """Lines of scrollback the answer had."""
    changed_rows: frozenset[int] | None
    extra: dict[str, Any]
    note: str | None

    @classmethod
    def from_refs(cls, refs: dict[str, Any]) -> Recorded | None:
        """None for a frame that read no screen; BadInput for refs that are not what `view_refs` wrote."""
        offset = refs.get("raw_offset")
        if not isinstance(offset, int):
            return None
        if "view" not in refs:
            return cls(offset, ViewOptions(), 0, None, {"state": None, "raw_offset": offset}, NO_VIEW_NOTE)
        answer = refs.get("answer")
        if not isinstance(answer, dict):
            raise BadInput("the frame's answer record is not an object", field="answer")
        lines, changed = answer.get("scrollback_lines", 0), answer.get("changed_rows")
        if not isinstance(lines, int) or lines < 0:
            raise BadInput(f"scrollback_lines {lines!r} is not a count", field="scrollback_lines")
        if changed is not None and (not isinstance(changed, list) or not all(isinstance(r, int) for r in changed)):
            raise BadInput("changed_rows is not a list of rows", field="changed_rows")
        extra = {"state": answer.get("state"), "raw_offset": offset}
        if "delta_cursor" in answer:
            extra["delta_cursor"] = answer["delta_cursor"]
        changed_rows = frozenset(changed) if changed is not None else None
        return cls(offset, ViewOptions.from_json(refs["view"]), lines, changed_rows, extra, None)

    @property
    def reach(self) -> int:
        """The earliest journal offset a rebuild may replay from (see SCROLLBACK_REACH)."""
        return max(0, self.offset - SCROLLBACK_REACH) if self.lines else self.offset


@dataclass(frozen=True, slots=True)
class Rebuilt:
    screen: dict[str, Any] | str
    replayed: int
    """Bytes of journal replayed to rebuild it."""
    incomplete: str | None
    """What of the answer could not be rebuilt (None: all of it)."""


def rebuild(directory: Path, meta: TerminalMeta, recorded: Recorded) -> Rebuilt:
    """The screen of the frame rebuilt from the terminal's journal and rendered as its answer was. Scrollback
    comes from replaying the journal: from the checkpoint before the offset, else from `reach` on. Blocking:
    call it in a worker."""
    lines = recorded.lines
    past = screen_at(directory, meta, recorded.offset, lines)
    replayed = past.replayed
    if len(past.engine.scrollback(lines)) < lines and recorded.reach < recorded.offset - past.replayed:
        past = screen_at(directory, meta, recorded.offset, lines, start=recorded.reach)
        replayed += past.replayed
    kept = past.engine.scrollback(lines)
    incomplete = None
    if len(kept) < lines:
        incomplete = (f"scrollback: the answer had {lines} lines, {len(kept)} could be rebuilt from the journal "
                      f"(a rebuild replays at most {SCROLLBACK_REACH >> 20} MB before the frame)")  # fmt: skip
    if recorded.note is not None:
        incomplete = recorded.note
    data = screen_data(past.engine, title=past.title, scrollback=lines, changed_rows=recorded.changed_rows,
                       extra=recorded.extra)  # fmt: skip
    return Rebuilt(render(data, recorded.options), replayed, incomplete)


def exported(directory: Path, name: str, refs: list[dict[str, Any]]) -> list[ArchivePart]:
    """The files of the terminal of `directory` (named `name` in the archive) that rebuild the screens the refs
    name (their raw offsets, blocks' ranges): its meta, index and blocks, and the journal from the checkpoint
    before the first of them to the last, with the checkpoints in that range."""
    offsets = [r["raw_offset"] for r in refs if isinstance(r.get("raw_offset"), int)]
    offsets += [_reach(r) for r in refs if isinstance(r.get("raw_offset"), int)]  # scrollback replays from there
    offsets += [o for r in refs if isinstance(r.get("raw"), dict) for o in r["raw"].values() if isinstance(o, int)]
    if not offsets:
        return []
    first = latest_checkpoint(directory, min(offsets))
    base, end = (int(first["offset"]) if first else 0), max(offsets)
    parts = [ArchivePart(f"{name}/{file}", directory / file) for file in ("meta.json", "output.idx", "blocks.jsonl")
             if (directory / file).is_file()]  # fmt: skip
    for path in sorted((directory / "checkpoints").glob("*.json")):
        if path.stem.isdigit() and base <= int(path.stem) <= end:
            parts.append(ArchivePart(f"{name}/checkpoints/{path.name}", path))
    parts.append(ArchivePart(f"{name}/output.raw", directory / "output.raw", start=base, length=end - base))
    return parts


def _reach(refs: dict[str, Any]) -> int:
    """Where a rebuild of the screen of a frame with these refs may replay from."""
    try:
        recorded = Recorded.from_refs(refs)
    except BadInput:
        return int(refs["raw_offset"])
    return recorded.reach if recorded is not None else int(refs["raw_offset"])
