"""frames.jsonl and its in-memory index: append-only, crash-safe, with a checkpoint every BLOCK frames.

Only `FrameMeta` of each frame lives in memory; texts are read back from the file by offset. A checkpoint
(`checkpoints/<block>.json`) holds the metas of one closed block and the cumulative counts of frame
categories at its end for every view (all frames, per agent, per resource, per both), so a restart reads the
checkpoints plus the frames after the last one, and counting the frames of any range costs two lookups and
at most two partial blocks, however long the history is.
"""

from __future__ import annotations

import os
from bisect import bisect_left, bisect_right
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from lookout.core.private_files import make_dir, open_file
from lookout.core.storage import append_jsonl, atomic_write_json, dumps, line_blocks, read_json
from lookout.timeline.frames import FrameMeta

BLOCK = 100


def block_of(seq: int) -> int:
    return (seq - 1) // BLOCK


def block_range(block: int) -> tuple[int, int]:
    return block * BLOCK + 1, (block + 1) * BLOCK


def view_key(agent: str | None, resource: str | None) -> str:
    return "|".join(part for part in (agent and f"a:{agent}", resource and f"r:{resource}") if part) or "*"


def view_keys(meta: FrameMeta) -> tuple[str, ...]:
    return ("*", f"a:{meta.agent}", f"r:{meta.resource}", f"a:{meta.agent}|r:{meta.resource}")


class FrameStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "frames.jsonl"
        self.checkpoints = directory / "checkpoints"
        make_dir(self.checkpoints)
        self.metas: list[FrameMeta] = []
        self.index: dict[str, list[int]] = {}
        self.latest_observation: dict[str, dict[str, int]] = {}
        self.pinned: dict[str, list[int]] = {}
        self._cumulative: dict[str, list[tuple[int, dict[str, int]]]] = {}
        """Per view, the counts at the end of each block: plain dicts of str to int, which the garbage
        collector stops tracking (Counters it would walk in every full collection, two a frame)."""
        self._running: dict[str, Counter[str]] = {}
        self._size = 0
        self._load()
        self._reader = open_file(self.path, os.O_RDONLY | os.O_CREAT)

    @property
    def last_seq(self) -> int:
        return len(self.metas)

    def close(self) -> None:
        os.close(self._reader)

    # writing

    def append(self, frame: dict[str, Any]) -> FrameMeta:
        """Append one frame (its seq must be the next one) and index it."""
        line = dumps(frame) + b"\n"
        offset = self._size
        self._size = append_jsonl(self.path, frame)
        meta = FrameMeta.of(frame, offset, len(line))
        self._index(meta)
        if meta.seq % BLOCK == 0:
            self._checkpoint(block_of(meta.seq))
        return meta

    def _index(self, meta: FrameMeta) -> None:
        self.metas.append(meta)
        for key in view_keys(meta):
            self.index.setdefault(key, []).append(meta.seq)
            self._running.setdefault(key, Counter())[meta.category] += 1
            if meta.kind == "observation":
                self.latest_observation.setdefault(key, {})[meta.resource] = meta.seq
            if meta.pinned:
                self.pinned.setdefault(key, []).append(meta.seq)
        if meta.seq % BLOCK == 0:
            self._close_block(block_of(meta.seq))

    def _close_block(self, block: int) -> None:
        first, _ = block_range(block)
        touched = {key for meta in self.metas[first - 1 :] for key in view_keys(meta)}
        for key in touched:
            self._cumulative.setdefault(key, []).append((block, dict(self._running[key])))

    def _checkpoint(self, block: int) -> None:
        first, last = block_range(block)
        atomic_write_json(
            self.checkpoints / f"{block:08d}.json",
            {"block": block, "end_offset": self._size, "metas": [m.to_list() for m in self.metas[first - 1 : last]]},
        )

    # loading

    def _load(self) -> None:
        """Checkpoints first (in block order, while they follow each other), then the frames after them."""
        offset = 0
        for path in sorted(self.checkpoints.glob("*.json")):
            try:
                saved = read_json(path)
                metas = [FrameMeta.from_list(values) for values in saved["metas"]]
            except (OSError, ValueError, KeyError, TypeError):
                break
            if (
                saved["block"] != block_of(self.last_seq + 1)
                or len(metas) != BLOCK
                or metas[0].seq != self.last_seq + 1
            ):
                break
            for meta in metas:
                self._index(meta)
            offset = saved["end_offset"]
        self._size = self._scan_from(offset)

    def _scan_from(self, offset: int) -> int:
        """Index the frames from `offset` on, reading the file a line at a time; a torn, corrupt or overlong
        line ends the file (it is cut off, so the next append starts on a clean line). Returns the file's
        size."""
        try:
            size = os.lstat(self.path).st_size
        except FileNotFoundError:
            return 0
        position = offset
        for line in (line for lines in line_blocks(self.path, offset) for line in lines):
            end = position + len(line or b"") + 1
            if line is None or end > size:  # too long, or torn (no newline)
                break
            try:
                frame = orjson.loads(line)
                if frame["seq"] != self.last_seq + 1:
                    raise ValueError("out of sequence")
                meta = FrameMeta.of(frame, position, end - position)
            except (ValueError, KeyError, TypeError, AttributeError):  # not a frame: a corrupt line
                break
            self._index(meta)
            if meta.seq % BLOCK == 0 and not (self.checkpoints / f"{block_of(meta.seq):08d}.json").exists():
                self._size = end
                self._checkpoint(block_of(meta.seq))
            position = end
        if position < size:
            fd = open_file(self.path, os.O_WRONLY)
            try:
                os.ftruncate(fd, position)
            finally:
                os.close(fd)
        return position

    # reading

    def raw(self, seq: int) -> bytes:
        meta = self.metas[seq - 1]
        return os.pread(self._reader, meta.length, meta.offset)

    def read(self, seq: int) -> dict[str, Any]:
        return orjson.loads(self.raw(seq))

    def seqs(self, key: str, first: int = 1, last: int | None = None) -> list[int]:
        """The seqs of a view between `first` and `last` (inclusive)."""
        seqs = self.index.get(key, [])
        last = self.last_seq if last is None else last
        return seqs[bisect_left(seqs, first) : bisect_right(seqs, last)]

    def counts(self, key: str, first: int, last: int) -> Counter[str]:
        """Frames of each category in a view between two seqs (inclusive)."""
        return self._counts_upto(key, last) - self._counts_upto(key, first - 1)

    def _counts_upto(self, key: str, seq: int) -> Counter[str]:
        if seq <= 0:
            return Counter()
        block = block_of(seq)
        entries = self._cumulative.get(key, [])
        i = bisect_right(entries, block - 1, key=lambda entry: entry[0])
        total = Counter(entries[i - 1][1]) if i else Counter()
        first, _ = block_range(block)
        for s in self.seqs(key, first, seq):
            total[self.metas[s - 1].category] += 1
        return total
