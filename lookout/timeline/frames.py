"""A frame as stored: its levels of detail, each rendered once with its exact token count (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from sys import intern
from typing import Any

from lookout.core.tokens import count_tokens
from lookout.timeline.recording import ROLES, FrameInput

LEVELS = ("full", "diff", "line")


def header(seq: int, resource: str) -> str:
    return f"[#{seq} {resource}]"


def build_frame(seq: int, ts: float, agent: str, given: FrameInput, diff: str | None) -> dict[str, Any]:
    """The stored frame: every level's text carries the frame's number and resource, so a message rendered
    from it says where it came from. A diff no shorter than the full text is not kept."""
    head = header(seq, given.resource)
    levels: dict[str, dict[str, Any]] = {}
    for level, body in (("full", given.full), ("diff", diff), ("line", given.line)):
        if body is None:
            continue
        text = f"{head} {body}"
        levels[level] = {"text": text, "tokens": count_tokens(text)}
    if "diff" in levels and levels["diff"]["tokens"] >= levels["full"]["tokens"]:
        del levels["diff"]
    return {
        "seq": seq,
        "ts": ts,
        "agent": agent,
        "resource": given.resource,
        "kind": given.kind,
        "role": ROLES[given.kind],
        "category": given.category,
        "subject": given.subject,
        "pinned": given.pinned,
        "refs": given.refs,
        "data": given.data,
        "levels": levels,
    }


@dataclass(slots=True)
class FrameMeta:
    """What rendering needs of a frame without reading it: kept in memory for every frame."""

    seq: int
    ts: float
    agent: str
    resource: str
    kind: str
    role: str
    category: str
    pinned: bool
    full_tokens: int
    diff_tokens: int | None
    line_tokens: int
    offset: int
    length: int

    def tokens(self, level: str) -> int:
        if level == "full":
            return self.full_tokens
        if level == "diff":
            return self.full_tokens if self.diff_tokens is None else self.diff_tokens
        return self.line_tokens

    def to_list(self) -> list[Any]:
        return [getattr(self, name) for name in self.__slots__]

    def __post_init__(self) -> None:  # a few distinct names shared by many frames: keep one copy of each
        self.agent, self.resource, self.kind = intern(self.agent), intern(self.resource), intern(self.kind)
        self.role, self.category = intern(self.role), intern(self.category)
        counts = (self.seq, self.full_tokens, self.line_tokens, self.offset, self.length)
        if not (all(type(n) is int and n >= 0 for n in counts) and type(self.ts) in (int, float)
                and type(self.pinned) is bool and (self.diff_tokens is None or type(self.diff_tokens) is int)):  # fmt: skip
            raise TypeError("not a frame: its seq, time, token counts, place or pinned flag are not of their types")

    @classmethod
    def from_list(cls, values: list[Any]) -> FrameMeta:
        return cls(*values)

    @classmethod
    def of(cls, frame: dict[str, Any], offset: int, length: int) -> FrameMeta:
        """The meta of a stored frame; TypeError or KeyError for a record that is not a frame (a forged one)."""
        levels = frame["levels"]
        if not all(isinstance(levels.get(level, {"text": ""})["text"], str) for level in LEVELS):
            raise TypeError("not a frame: a level's text is not text")
        diff = levels.get("diff")
        return cls(
            frame["seq"], frame["ts"], frame["agent"], frame["resource"], frame["kind"], frame["role"],
            frame["category"], frame["pinned"], levels["full"]["tokens"], diff["tokens"] if diff else None,
            levels["line"]["tokens"], offset, length,
        )  # fmt: skip


def level_of(frame: dict[str, Any], level: str) -> dict[str, Any]:
    """A level's {text, tokens}; a missing diff falls back to the full text."""
    levels = frame["levels"]
    return levels.get(level) or levels["full"]


def level_text(frame: dict[str, Any], level: str) -> str:
    return level_of(frame, level)["text"]
