"""Several hands on one page: each agent's own last snapshot (whose refs its actions use), the last action
and whose it was, and the check that refuses a ref whose element another hand's action changed or removed
since the agent's snapshot (pure, but for the page read `element_line` is given)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from lookout.browser.actions import RefCheck
from lookout.core.errors import Conflict
from lookout.core.leases import when

MAX_AGENTS = 32
"""The snapshots kept per page: one per agent, the oldest agent's dropped beyond this many."""
_UNSTABLE = re.compile(r" \[(?:box=[^\]]*|active)\]")
"""What an element's line may change without the element changing: its box (a scroll, a reflow) and focus."""


@dataclass(frozen=True, slots=True)
class Acted:
    agent: str
    at: float
    """When it ended (time.time()): a snapshot read before then may not show what it did."""
    action: str

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "at": when(self.at), "action": self.action}


class PageHands:
    """Who saw and did what on one page."""

    def __init__(self) -> None:
        self.seen: dict[str, RefCheck] = {}
        self.last: Acted | None = None

    def saw(self, agent: str, known: RefCheck) -> None:
        self.seen.pop(agent, None)
        self.seen[agent] = known
        if len(self.seen) > MAX_AGENTS:
            del self.seen[next(iter(self.seen))]

    def known(self, agent: str, page_last: RefCheck) -> RefCheck:
        """The agent's own last snapshot, else the page's last (refs an agent was given by another)."""
        return self.seen.get(agent, page_last)

    def acted(self, agent: str, action: str) -> None:
        self.last = Acted(agent, time.time(), action)

    def other_since(self, agent: str, read_at: float) -> Acted | None:
        """Another hand's action that ended after a snapshot read at `read_at` began, if any."""
        last = self.last
        return last if last is not None and last.agent != agent and last.at >= read_at else None


def ref_line(raw: str, ref: str) -> str | None:
    """The snapshot line of the node with `ref` (role, name, flags), without its box, focus and indentation."""
    mark = f"[ref={ref}]"
    for line in raw.splitlines():
        if mark in line:
            return _UNSTABLE.sub("", line).strip().lstrip("- ").rstrip(":").strip("'")
    return None


def check_unchanged(ref: str, obs_id: str, seen_raw: str, now_raw: str, other: Acted) -> None:
    """Refuse (Conflict) a ref whose element went, or changed (role, name or state), between the snapshot
    `obs_id` (raw text `seen_raw`) and the page now, after `other`'s action."""
    before, after = ref_line(seen_raw, ref), ref_line(now_raw, ref)
    by = f"the {other.action} of {other.agent!r} at {when(other.at)}, after your snapshot {obs_id},"
    if after is None:
        raise Conflict(f"ref {ref} ({before or 'an element'}) is no longer on the page: {by} removed or replaced "
                       "it; snapshot again", ref=ref, by=other.agent)  # fmt: skip
    if before is not None and after != before:
        raise Conflict(f"ref {ref} changed: it was `{before}`, it is now `{after}` ({by[:-1]}); snapshot again to act "
                       "on what it is now", ref=ref, by=other.agent)  # fmt: skip
