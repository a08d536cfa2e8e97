"""A run exported as one replay archive (lookout.core.archive): an agent's frames between two seqs, renumbered
from 1 as the timeline of the archive, with the files every registry needs to show again what each frame gave
the agent (the terminal journal ranges that rebuild its screens, page snapshots, device screenshots and their
UI dumps). `lookout replay FILE` serves it read-only. Blocking: call it in a thread."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lookout.core.archive import ArchivePart, write_archive
from lookout.core.errors import BadInput
from lookout.core.registry import Registry
from lookout.core.storage import dumps
from lookout.timeline.timeline import Timeline

FRAMES = "timeline/frames.jsonl"
KINDS = {"terminal": "terminals", "device": "devices", "page": "pages"}
"""A frame's resource kind (`terminal:<id>`) to the name of its registry."""


def export_run(
    timeline: Timeline,
    registries: Mapping[str, Registry],
    agent: str | None,
    first: int | None,
    last: int | None,
    dest: Path,
) -> dict[str, Any]:
    """Write the archive to `dest`; returns what it holds."""
    if first is not None and last is not None and last < first:
        raise BadInput(f"to ({last}) is before from ({first})", field="to")
    frames = timeline.stored(first, last, agent)
    if not frames:
        raise BadInput("no frames in that range for that agent: nothing to export", field="from")
    refs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    lines = []
    for number, frame in enumerate(frames, start=1):
        kind, _, name = str(frame.get("resource", "")).partition(":")
        if kind in KINDS and name:
            refs[(kind, name)].append(frame.get("refs") or {})
        lines.append(dumps({**frame, "seq": number, "original_seq": frame["seq"]}))
    parts = [ArchivePart(FRAMES, b"\n".join(lines) + b"\n")]
    for (kind, name), given in refs.items():
        parts += registries[KINDS[kind]].exported(name, given)
    files = write_archive(parts, dest)
    return {"frames": len(frames), "from": frames[0]["seq"], "to": frames[-1]["seq"], "files": files}
