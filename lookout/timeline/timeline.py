"""The timeline: frames recorded by every domain, rendered within a budget, extracted, compressed.

`record` never blocks its caller: frames go through a queue to one writer thread, which numbers them,
diffs observations against the previous one of the same resource, counts tokens and appends them. Reads
wait (in their worker thread) until what was recorded before them is written, then hold the lock while
they read, so a render sees one consistent history.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from lookout.core.errors import BadInput, NotFound
from lookout.core.private_files import make_dir
from lookout.core.tokens import count_tokens
from lookout.timeline.frames import LEVELS, build_frame, header, level_text
from lookout.timeline.history import StoreHistory
from lookout.timeline.linediff import line_diff
from lookout.timeline.recording import FrameInput, current_agent
from lookout.timeline.render import render
from lookout.timeline.store import BLOCK, FrameStore, block_range
from lookout.timeline.summaries import SummaryStore

log = logging.getLogger("lookout.timeline")

MAX_FRAMES_PAGE = 2000
MAX_EXTRACT_FRAMES = 5000
SYNC_TIMEOUT_S = 10.0


class Timeline:
    """The timeline of a data dir. `deferred`: its files are read, and written, only from `open` on (a daemon
    that takes over from another opens it once that one has let go of the data dir)."""

    def __init__(self, directory: Path, deferred: bool = False) -> None:
        self.directory = directory
        self.store: FrameStore
        self.summaries: SummaryStore
        self.lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[FrameInput, str, float] | None] = queue.SimpleQueue()
        self._written = threading.Condition()
        self._submitted = 0
        self._done = 0
        self._previous: dict[tuple[str, str], tuple[int, str]] = {}
        self._writer: threading.Thread | None = None
        self._forward: Callable[[dict[str, Any]], None] | None = None
        if not deferred:
            self.open()

    def open(self) -> None:
        """Read the stored frames and start writing new ones (those recorded until now first); also again after
        `forward` (a handover that failed: this daemon writes the timeline again)."""
        make_dir(self.directory)
        self.store = FrameStore(self.directory)
        self.summaries = SummaryStore(self.directory / "summaries.jsonl", BLOCK)
        self._previous.clear()
        with self._written:
            self._forward = None
        self._writer = threading.Thread(target=self._write_loop, name="timeline-writer", daemon=True)
        self._writer.start()

    # recording

    def record(self, frame: FrameInput) -> None:
        """Queue a frame; its agent is the one of the request being served unless the frame names one."""
        agent = frame.agent or current_agent.get()
        with self._written:
            forward = self._forward
            if forward is None:
                self._submitted += 1
                self._queue.put((frame, agent, time.time()))
        if forward is not None:
            forward({"frame": asdict(frame), "agent": agent, "ts": time.time()})

    def forward(self, send: Callable[[dict[str, Any]], None]) -> None:
        """From now on, give every frame recorded to `send` (the daemon that took over records it), once the
        frames queued until now are written; then this timeline writes nothing more."""
        with self._written:
            self._forward = send
        self.close()

    def record_forwarded(self, item: dict[str, Any]) -> None:
        """Record a frame that the daemon before this one was given (see `forward`), with its agent and time."""
        frame = FrameInput(**item["frame"])
        with self._written:
            self._submitted += 1
        self._queue.put((frame, str(item["agent"]), float(item["ts"])))

    def _write_loop(self) -> None:
        failure = None
        while (item := self._queue.get()) is not None:
            try:
                with self.lock:
                    self._append(*item)
                failure = None
            except OSError as exc:  # a full disk: the frame is lost, said once, not for every frame
                if failure != exc.strerror:
                    log.error("timeline: frames are not recorded: %s", exc.strerror)
                failure = exc.strerror
            except Exception:  # one bad frame must not stop the timeline
                log.exception("timeline: could not record a frame")
            with self._written:
                self._done += 1
                self._written.notify_all()

    def _append(self, given: FrameInput, agent: str, ts: float) -> None:
        seq = self.store.last_seq + 1
        diff = None
        if given.kind == "observation":
            key = (given.resource, given.subject)
            previous = self._previous.get(key) or self._stored_previous(given)
            if previous is not None:
                diff = line_diff(previous[1], given.full, f"#{previous[0]}")
            self._previous[key] = (seq, given.full)
        self.store.append(build_frame(seq, ts, agent, given, diff))

    def _stored_previous(self, given: FrameInput) -> tuple[int, str] | None:
        """After a restart: the last stored observation of the resource, if it was of the same subject."""
        seq = self.store.latest_observation.get(f"r:{given.resource}", {}).get(given.resource)
        if seq is None:
            return None
        frame = self.store.read(seq)
        if frame["subject"] != given.subject:
            return None
        return seq, frame["levels"]["full"]["text"].removeprefix(f"{header(seq, given.resource)} ")

    def sync(self, timeout_s: float = SYNC_TIMEOUT_S) -> None:
        """Wait until every frame recorded before this call is written."""
        with self._written:
            target = self._submitted
            self._written.wait_for(lambda: self._done >= target, timeout_s)

    def close(self) -> None:
        if self._writer is None or not self._writer.is_alive():
            return
        self._queue.put(None)
        self._writer.join(SYNC_TIMEOUT_S)
        self.store.close()

    # reading (call from worker threads)

    def frames(self, first: int | None, last: int | None, agent: str | None, resource: str | None,
               limit: int, text: bool) -> dict[str, Any]:  # fmt: skip
        """Frames of a view in order, `limit` at most: from `first` on, else the last ones up to `last`."""
        self.sync()
        with self.lock:
            history = StoreHistory(self.store, self.summaries, agent, resource)
            seqs = history.seqs(first or 1, last if last is not None else history.last_seq)
            page = seqs[:limit] if first is not None else seqs[-limit:]
            frames = [self._describe(self.store.read(s), text) for s in page]
            more = seqs[len(page)] if first is not None and len(seqs) > len(page) else None
            return {"frames": frames, "last_seq": history.last_seq, "next_from": more}

    def stored(self, first: int | None, last: int | None, agent: str | None) -> list[dict[str, Any]]:
        """The frames of a view between `first` and `last` as stored (every level), oldest first."""
        self.sync()
        with self.lock:
            history = StoreHistory(self.store, self.summaries, agent, None)
            return [self.store.read(seq) for seq in history.seqs(first or 1, last or history.last_seq)]

    def frame(self, seq: int) -> dict[str, Any]:
        """Frame `seq` with every level's text; NotFound when there is no such frame."""
        self.sync()
        with self.lock:
            if not 1 <= seq <= self.store.last_seq:
                raise NotFound(f"no frame {seq} (the timeline has frames 1..{self.store.last_seq})")
            return self._describe(self.store.read(seq), True)

    @staticmethod
    def _describe(frame: dict[str, Any], text: bool) -> dict[str, Any]:
        levels = frame.pop("levels")
        frame["tokens"] = {level: levels[level]["tokens"] for level in LEVELS if level in levels}
        frame["line"] = levels["line"]["text"]
        if text:
            frame["text"] = {level: levels[level]["text"] for level in LEVELS if level in levels}
        return frame

    def context(self, budget: int, agent: str | None, resource: str | None) -> dict[str, Any]:
        self.sync()
        with self.lock:
            return render(StoreHistory(self.store, self.summaries, agent, resource), budget)

    def extract(self, first: int, last: int, agent: str | None, resource: str | None, level: str,
                limit: int) -> dict[str, Any]:  # fmt: skip
        """The frames of a range as they were captured (never re-rendered from the current state)."""
        if last < first:
            raise BadInput(f"to ({last}) is before from ({first})", field="to")
        self.sync()
        with self.lock:
            history = StoreHistory(self.store, self.summaries, agent, resource)
            seqs = history.seqs(first, last)
            page = seqs[:limit]
            messages = []
            for seq in page:
                frame = self.store.read(seq)
                messages.append({"role": frame["role"], "content": level_text(frame, level),
                                 "source_frames": {"from": seq, "to": seq}})  # fmt: skip
        content = "\n\n".join(m["content"] for m in messages)
        return {
            "content": content,
            "tokens": count_tokens(content),
            "messages": messages,
            "source_frames": {"from": first, "to": last},
            "frames": len(page),
            "next_from": seqs[len(page)] if len(seqs) > len(page) else None,
        }

    # compression support

    def block_frames(self, block: int) -> tuple[list[dict[str, Any]], list[bytes]]:
        """The stored frames of a closed block and their exact bytes."""
        first, last = block_range(block)
        with self.lock:
            raw = [self.store.raw(seq) for seq in range(first, min(last, self.store.last_seq) + 1)]
        return [orjson.loads(line) for line in raw], raw

    def block_tokens(self, block: int) -> int:
        first, last = block_range(block)
        return sum(m.full_tokens for m in self.store.metas[first - 1 : last])
