"""A view of the stored timeline (all frames, or one agent's and/or one resource's) as render.History."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from urllib.parse import urlencode

from lookout.timeline.frames import FrameMeta, level_text
from lookout.timeline.render import Summary
from lookout.timeline.store import FrameStore, view_key
from lookout.timeline.summaries import SummaryStore


class StoreHistory:
    def __init__(self, store: FrameStore, summaries: SummaryStore, agent: str | None, resource: str | None) -> None:
        self.store = store
        self.key = view_key(agent, resource)
        self.last_seq = store.last_seq
        given = {k: v for k, v in (("agent", agent), ("resource", resource)) if v}
        self.query = f"&{urlencode(given)}" if given else ""
        self._summaries = summaries if not given else None  # summaries cover every frame of their range
        self._summary_blocks = summaries.blocks() if not given else []

    def seqs(self, first: int, last: int) -> list[int]:
        return self.store.seqs(self.key, first, min(last, self.last_seq))

    def meta(self, seq: int) -> FrameMeta:
        return self.store.metas[seq - 1]

    def counts(self, first: int, last: int) -> Counter[str]:
        return self.store.counts(self.key, first, last)

    def text(self, seq: int, level: str) -> str:
        return level_text(self.store.read(seq), level)

    def latest_observations(self) -> list[int]:
        return list(self.store.latest_observation.get(self.key, {}).values())

    def pinned(self) -> list[int]:
        return self.store.pinned.get(self.key, [])

    def summary(self, block: int) -> Summary | None:
        return self._summaries.get(block) if self._summaries is not None else None

    def summary_blocks_before(self, block: int) -> bool:
        return bisect_left(self._summary_blocks, block) > 0
