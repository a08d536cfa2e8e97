"""The small interface every domain records frames through (the only part of timeline they import).

A domain builds a `FrameInput` (what happened, at its detail levels, as text) and hands it to a `Recorder`.
The agent comes from `current_agent`, which the HTTP layer sets from the `X-Lookout-Agent` header for the
request being served (context variables follow the request into tasks and worker threads).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Kind = Literal["action", "observation", "event"]
Role = Literal["assistant", "user", "system"]

DEFAULT_AGENT = "default"
current_agent: ContextVar[str] = ContextVar("lookout_agent", default=DEFAULT_AGENT)

ROLES: dict[str, Role] = {"action": "assistant", "observation": "user", "event": "system"}


@dataclass(frozen=True)
class FrameInput:
    """One thing that happened on a resource.

    `category` is a singular noun phrase that pluralises with "s" ("terminal screen", "command"), used to
    count elided frames. `full` is the complete text, `line` one line of it; the timeline diffs the `full`
    text of an observation against the previous observation of the same resource and `subject`. `data` holds the facts a summary is made of
    (command, exit_code, cwd, url, app...); `refs` point at what the frame came from."""

    resource: str
    kind: Kind
    category: str
    full: str
    line: str
    subject: str = ""
    pinned: bool = False
    refs: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None


class Recorder(Protocol):
    def record(self, frame: FrameInput) -> None:
        """Append the frame (thread-safe; never raises for a well-formed input)."""


class NullRecorder:
    """Records nothing: for domain objects used without a timeline (tests of the domain alone)."""

    def record(self, frame: FrameInput) -> None:
        return None
