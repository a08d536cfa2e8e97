"""Rendering a history into messages within a token budget, by choosing a level of detail per frame.

Frames are grouped in blocks of BLOCK seqs (aligned to absolute seqs, so the groups never shift). Walking
from the newest block back, each block gets the richest level the budget still allows, and no block is
richer than a newer one:

- DETAIL: every frame in full, an observation superseded by a newer one of its resource as its diff;
- LINES: every frame as one line (pinned frames in full);
- ESSENTIALS: the agent's actions and pinned frames as one line each, the rest elided;
- SUMMARY: the block's summary where one is ready (elided where none is);
- MASKED: elided.

Whatever the level, the newest observation of each resource is kept (in full where the budget allows, else
its diff or line) and pinned frames keep a line as long as they fit, newest first. Consecutive elided frames
become one message that names the range and how to fetch it back. Token counts are exact (every level's
count was taken when the frame was recorded, elision lines are counted here), and the result is checked
against the budget before it is returned, so `total_tokens <= budget` always holds.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from lookout.core.tokens import count_tokens
from lookout.timeline.frames import FrameMeta
from lookout.timeline.store import BLOCK, block_of, block_range

MASKED, SUMMARY, ESSENTIALS, LINES, DETAIL = range(5)
TYPICAL_ELISION = Counter({"terminal screen": 40, "terminal input": 30, "command": 30})
"""What a typical elision line counts, to estimate its tokens for planning (the result is counted exactly)."""
MAX_PLANS = 6


@dataclass(frozen=True)
class Summary:
    first: int
    last: int
    text: str
    tokens: int
    method: str


class History(Protocol):
    """One view of the timeline (all frames, or those of an agent and/or resource) up to `last_seq`."""

    last_seq: int
    query: str  # extra query parameters naming the view, for the fetch-back handle

    def seqs(self, first: int, last: int) -> list[int]: ...
    def meta(self, seq: int) -> FrameMeta: ...
    def counts(self, first: int, last: int) -> Counter[str]: ...
    def text(self, seq: int, level: str) -> str: ...
    def latest_observations(self) -> list[int]: ...
    def pinned(self) -> list[int]: ...
    def summary(self, block: int) -> Summary | None: ...
    def summary_blocks_before(self, block: int) -> bool: ...


@dataclass
class Plan:
    special: dict[int, str] = field(default_factory=dict)  # seq -> level, newest observation per resource
    blocks: list[tuple[int, int]] = field(default_factory=list)  # (block, level), newest first
    old_pinned: list[int] = field(default_factory=list)


def plural(category: str, n: int) -> str:
    if n == 1:
        return f"1 {category}"
    suffix = "es" if category.endswith(("s", "x", "ch", "sh")) else "s"
    return f"{n} {category}{suffix}"


def elision_text(first: int, last: int, counts: Counter[str], query: str) -> str:
    what = ", ".join(plural(c, n) for c, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    span = f"frame {first}" if first == last else f"frames {first}-{last}"
    return f"{span} elided: {what}; GET /v1/timeline/extract?from={first}&to={last}{query}"


def frame_level(meta: FrameMeta, block_level: int, special: dict[int, str]) -> str | None:
    """The level a frame is shown at in a block of the given level (None: elided)."""
    if meta.seq in special:
        return special[meta.seq]
    if block_level == DETAIL:
        return "diff" if meta.kind == "observation" else "full"
    if block_level == LINES:
        return "full" if meta.pinned else "line"
    if block_level == ESSENTIALS and (meta.pinned or meta.kind == "action"):
        return "line"
    return None


def _block_cost(history: History, block: int, level: int, special: dict[int, str], after_mask: bool,
                elision: int) -> tuple[int, bool]:  # fmt: skip
    """Planned tokens of a block at a level (specials are paid for already), and whether it ends elided."""
    first, last = block_range(block)
    cost, masked = 0, after_mask
    for seq in history.seqs(first, last):
        meta = history.meta(seq)
        shown = frame_level(meta, level, special)
        if shown is None:
            if not masked:
                cost += elision
            masked = True
        else:
            cost += 0 if seq in special else meta.tokens(shown)
            masked = False
    return cost, masked


def plan(history: History, budget: int, elision: int) -> Plan:
    """Levels in order of what matters most: the newest observation of each resource; then blocks from the
    newest back at DETAIL, LINES or ESSENTIALS; then pinned frames in what is left elided; then summaries of
    older blocks. One elision line's worth (`elision` tokens) is always held back for what lies before the last block decided."""
    result = Plan()
    remaining = budget - elision
    for seq in sorted(history.latest_observations(), reverse=True):
        meta = history.meta(seq)
        for form in ("full", "diff", "line"):
            if meta.tokens(form) <= remaining:
                result.special[seq] = form
                remaining -= meta.tokens(form)
                break
    if history.last_seq == 0:
        return result
    level, block, after_mask = DETAIL, block_of(history.last_seq), False
    while block >= 0:
        first, last = block_range(block)
        if history.seqs(first, last):
            while level >= ESSENTIALS:
                cost, ends_masked = _block_cost(history, block, level, result.special, after_mask, elision)
                if cost <= remaining:
                    break
                level -= 1
            if level < ESSENTIALS:
                break
            remaining -= cost
            result.blocks.append((block, level))
            after_mask = ends_masked
        block -= 1
    elided_before = block_range(block + 1)[0] if block >= 0 else 1
    pinned = history.pinned()
    for seq in reversed(pinned[: bisect_left(pinned, elided_before)]):  # newest first, until one does not fit
        if seq in result.special:
            continue
        cost = history.meta(seq).line_tokens + elision
        if cost > remaining:
            break
        remaining -= cost
        result.old_pinned.append(seq)
    while block >= 0 and history.summary_blocks_before(block + 1):
        first, last = block_range(block)
        seqs = history.seqs(first, last)
        summary = history.summary(block)
        pinned_here = [seq for seq in result.old_pinned if first <= seq <= last]
        refund = sum(history.meta(seq).line_tokens + elision for seq in pinned_here)
        if summary is not None and not any(first <= seq <= last for seq in result.special):
            if summary.tokens > remaining + refund:  # a summary names the failures it covers
                break
            remaining += refund - summary.tokens
            result.old_pinned = [seq for seq in result.old_pinned if seq not in pinned_here]
            result.blocks.append((block, SUMMARY))
            after_mask = False
        elif seqs:
            if not after_mask:
                remaining -= elision
            result.blocks.append((block, MASKED))
            after_mask = True
        block -= 1
    return result


Item = tuple[
    str, int, int, str
]  # ("frame", seq, seq, level) | ("mask", first, last, "") | ("summary", first, last, "")


def _masked_stretch(chosen: Plan, first: int, last: int) -> list[Item]:
    """Items of an elided stretch: the newest observations and kept pinned frames in it, masks between."""
    items: list[Item] = []
    cursor = first
    for seq in sorted(s for s in (*chosen.special, *chosen.old_pinned) if first <= s <= last):
        if seq > cursor:
            items.append(("mask", cursor, seq - 1, ""))
        items.append(("frame", seq, seq, chosen.special.get(seq, "line")))
        cursor = seq + 1
    if cursor <= last:
        items.append(("mask", cursor, last, ""))
    return items


def layout(history: History, chosen: Plan) -> list[Item]:
    """The plan as items in order; consecutive masks are merged later."""
    boundary = block_range(chosen.blocks[-1][0])[0] if chosen.blocks else history.last_seq + 1
    items = _masked_stretch(chosen, 1, boundary - 1)
    for block, level in reversed(chosen.blocks):
        first, last = block_range(block)
        if level == MASKED:
            items.extend(_masked_stretch(chosen, first, last))
        elif level == SUMMARY:
            items.append(("summary", first, last, ""))
        else:
            for seq in history.seqs(first, last):
                shown = frame_level(history.meta(seq), level, chosen.special)
                items.append(("frame", seq, seq, shown) if shown else ("mask", seq, seq, ""))
    return items


def materialise(history: History, items: list[Item], tokens_of: Callable[[str], int]) -> list[dict[str, Any]]:
    """Messages from items: each kept frame its own message, each run of masks one elision line."""
    messages: list[dict[str, Any]] = []
    run: list[int] | None = None

    def close_run() -> None:
        seqs = history.seqs(run[0], run[1]) if run else []
        if seqs:
            text = elision_text(seqs[0], seqs[-1], history.counts(seqs[0], seqs[-1]), history.query)
            messages.append({"role": "user", "content": text, "source_frames": {"from": seqs[0], "to": seqs[-1]},
                             "tokens": tokens_of(text), "kind": "elided", "frames": len(seqs)})  # fmt: skip

    for kind, first, last, level in items:
        if kind == "mask":
            run = [run[0], last] if run else [first, last]
            continue
        close_run()
        run = None
        if kind == "summary":
            summary = history.summary(block_of(first))
            assert summary is not None
            seqs = history.seqs(first, last)
            messages.append({"role": "user", "content": summary.text,
                             "source_frames": {"from": seqs[0], "to": seqs[-1]}, "tokens": summary.tokens,
                             "kind": "summary", "frames": len(seqs)})  # fmt: skip
        else:
            meta = history.meta(first)
            messages.append({"role": meta.role, "content": history.text(first, level),
                             "source_frames": {"from": first, "to": first}, "tokens": meta.tokens(level),
                             "kind": "frame", "level": level})  # fmt: skip
    close_run()
    return messages


def render(history: History, budget: int, tokens_of: Callable[[str], int] = count_tokens) -> dict[str, Any]:
    """Messages and metadata for a view within `budget` tokens (see the module docstring)."""
    elision = tokens_of(elision_text(10**6, 10**6 + BLOCK, TYPICAL_ELISION, history.query))
    effective, shrink = budget, elision
    messages: list[dict[str, Any]] = []
    for _ in range(MAX_PLANS):  # estimates were off: plan again for less, by more each time
        messages = materialise(history, layout(history, plan(history, effective, elision)), tokens_of)
        total = sum(m["tokens"] for m in messages)
        if total <= budget:
            break
        effective -= total - budget + shrink
        shrink *= 2
    while messages and sum(m["tokens"] for m in messages) > budget:
        messages.pop(0)
    return _result(history, messages, budget)


def _result(history: History, messages: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    rendered: list[dict[str, Any]] = []
    elided: list[dict[str, Any]] = []
    summarised: list[dict[str, Any]] = []
    index: dict[int, int] = {}
    out: list[dict[str, Any]] = []
    covered_from = messages[0]["source_frames"]["from"] if messages else history.last_seq + 1
    if covered_from > 1 and history.seqs(1, covered_from - 1):
        seqs = history.seqs(1, covered_from - 1)
        elided.append({"from": seqs[0], "to": seqs[-1], "frames": len(seqs), "message": None})
    for i, m in enumerate(messages):
        span = m["source_frames"]
        if m["kind"] == "frame":
            rendered.append({"seq": span["from"], "level": m["level"], "tokens": m["tokens"]})
            index[span["from"]] = i
        else:
            (elided if m["kind"] == "elided" else summarised).append(
                {"from": span["from"], "to": span["to"], "frames": m["frames"], "message": i}
            )
        out.append({"role": m["role"], "content": m["content"], "source_frames": span})
    stable_until = block_range(block_of(history.last_seq))[0] if history.last_seq else 1
    prefix = [m for m in out if m["source_frames"]["to"] < stable_until]
    return {
        "messages": out,
        "metadata": {
            "budget": budget,
            "total_tokens": sum(m["tokens"] for m in messages),
            "last_seq": history.last_seq,
            "rendered_frames": rendered,
            "elided": elided,
            "summarised": summarised,
            "frame_to_message_index": index,
            "prefix_messages": len(prefix),
            "prefix_hash": hashlib.sha256(orjson.dumps(prefix)).hexdigest()[:16],
            "block_size": BLOCK,
        },
    }
