"""Background compression: closed blocks of frames, old enough and large enough, summarised once each.

A block is compressible when it is full (BLOCK frames), lies entirely before the protected recent window,
holds at least `threshold` tokens at full detail and has no summary for its exact content yet. Blocks are
summarised newest first (they are the ones a render reaches for first), one at a time, in a worker thread.
Rendering never waits for this: a block without a summary is simply elided.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lookout.timeline.llm_summarizer import ChatSummarizer
from lookout.timeline.store import BLOCK, block_of, block_range
from lookout.timeline.summaries import content_hash, summarise_frames
from lookout.timeline.timeline import Timeline

log = logging.getLogger("lookout.timeline")

DETERMINISTIC = "deterministic"


class Compressor:
    def __init__(self, timeline: Timeline, summarizer: ChatSummarizer | None = None, protect: int = 3 * BLOCK,
                 threshold: int = 2000, interval_s: float = 2.0) -> None:  # fmt: skip
        self.timeline = timeline
        self.summarizer = summarizer
        self.protect = protect
        self.threshold = threshold
        self.interval_s = interval_s
        self._settled: set[int] = set()  # blocks summarised or too small: their content never changes
        self._task: asyncio.Task[None] | None = None

    def candidates(self) -> list[int]:
        """Compressible blocks, newest first."""
        last_seq = self.timeline.store.last_seq
        newest = block_of(last_seq - self.protect + 1) - 1 if last_seq >= self.protect else -1
        found = []
        for block in range(newest, -1, -1):
            if block in self._settled:
                continue
            if self.timeline.summaries.get(block) is not None or self.timeline.block_tokens(block) < self.threshold:
                self._settled.add(block)
                continue
            found.append(block)
        return found

    def compress(self, block: int) -> dict[str, Any] | None:
        """Summarise one block (blocking: run in a worker thread). None when it already has its summary."""
        frames, raw = self.timeline.block_frames(block)
        first, last = block_range(block)
        digest = content_hash(raw)
        if len(frames) < BLOCK or self.timeline.summaries.has(block, digest):
            return None
        body, method = summarise_frames(frames), DETERMINISTIC
        if self.summarizer is not None:
            try:
                body = self.summarizer.summarise("\n\n".join(f["levels"]["line"]["text"] for f in frames) +
                                                 "\n\nFacts:\n" + body)  # fmt: skip
                method = self.summarizer.method
            except Exception as exc:  # noqa: BLE001 (any failure of an optional service: keep the deterministic one)
                log.warning("timeline: summariser failed for frames %d-%d (%s); kept the deterministic one",
                            first, last, exc)  # fmt: skip
        self._settled.add(block)
        return self.timeline.summaries.add(first, last, digest, method, body)

    async def run_once(self) -> int:
        done = 0
        for block in self.candidates():
            if await asyncio.to_thread(self.compress, block) is not None:
                done += 1
        return done

    async def _loop(self) -> None:
        while True:
            try:
                await self.run_once()
            except Exception:
                log.exception("timeline: compression pass failed")
            await asyncio.sleep(self.interval_s)

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="timeline-compression")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
