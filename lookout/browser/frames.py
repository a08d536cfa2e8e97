"""What a page records in the timeline: pages opened and closed, snapshots, screenshots, actions (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from lookout.timeline.recording import FrameInput

if TYPE_CHECKING:
    from lookout.browser.action_kinds import Action

LINE_CHARS = 160


def resource(page_id: str) -> str:
    return f"page:{page_id}"


def _cut(text: str) -> str:
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


def opened_frame(page_id: str, url: str) -> FrameInput:
    text = f"opened {url or 'a blank page'}"
    return FrameInput(resource(page_id), "action", "page action", text, _cut(text),
                      data={"url": url, "action": "open"} if url else {"action": "open"})  # fmt: skip


def closed_frame(page_id: str, url: str) -> FrameInput:
    text = f"closed the page (it was at {url})"
    return FrameInput(resource(page_id), "action", "page action", text, _cut(text), data={"action": "close"})


def action_frame(page_id: str, action: Action, result: dict[str, Any] | None, error: str | None) -> FrameInput:
    """An action with its effects; a failed action, or one that logged console errors or failed requests,
    is pinned."""
    from lookout.browser.action_kinds import describe  # loaded by then (the action was made of it); not at start-up

    what = describe(action)
    if error is not None:
        text = f"{what} failed: {error}"
        return FrameInput(resource(page_id), "action", "page action", text, _cut(text), pinned=True,
                          data={"action": f"{what} (failed)"})  # fmt: skip
    assert result is not None
    effects = result.get("effects") or {}
    shown = orjson.dumps(effects).decode() if effects else "no visible effect"
    text = f"{what} at {result.get('url')}: {shown}"
    errors = [c for c in effects.get("console", []) if c["level"] == "error"] + effects.get("failed_requests", [])
    line = f"{what}" + (f" → {effects['navigation']['url']}" if "navigation" in effects else "")
    line += f" ({len(errors)} errors)" if errors else ""
    return FrameInput(resource(page_id), "action", "page action", text, _cut(line), pinned=bool(errors),
                      data={"url": result.get("url"), "action": _cut(what)})  # fmt: skip


def snapshot_frame(page_id: str, result: dict[str, Any], mode: str) -> FrameInput:
    """A snapshot as the agent got it (`mode`: snapshot, or `snapshot since`/`snapshot expand` for a diff
    or a subtree, which are compared only with their own kind)."""
    tokens = result["metadata"].get("tokens")
    line = f"{mode} of {result['url']} ({result['title']!r}, obs {result['obs_id']}" + (
        f", {tokens} tokens)" if tokens is not None else ")"
    )
    return FrameInput(resource(page_id), "observation", "page snapshot", result["text"], _cut(line), subject=mode,
                      refs={"obs_id": result["obs_id"]}, data={"url": result["url"]})  # fmt: skip


def screenshot_frame(page_id: str, result: dict[str, Any], page_url: str) -> FrameInput:
    image = result["image"]
    line = f"screenshot {image['width']}x{image['height']} of {page_url} (obs {result['obs_id']})"
    return FrameInput(resource(page_id), "observation", "page screenshot", f"{line}: GET {result['url']}",
                      _cut(line), subject="screenshot", refs={"obs_id": result["obs_id"], "image": result["url"]},
                      data={"url": page_url})  # fmt: skip
