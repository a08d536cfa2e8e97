"""ASGI middleware naming the agent of each request for the timeline: the `X-Lookout-Agent` header, or for a
WebSocket (browsers cannot set its headers) an `agent` query parameter; `default` without either."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from lookout.core.printable import without_controls
from lookout.timeline.recording import DEFAULT_AGENT, current_agent

MAX_AGENT_CHARS = 100


def agent_name(header: bytes | None) -> str:
    """The agent a header names: decoded, control characters (C0, DEL, C1) removed, at most MAX_AGENT_CHARS."""
    if not header:
        return DEFAULT_AGENT
    name = without_controls(header.decode("utf-8", "replace")).strip()[:MAX_AGENT_CHARS]
    return name or DEFAULT_AGENT


class AgentContext:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        named = dict(scope["headers"]).get(b"x-lookout-agent")
        if named is None and scope["type"] == "websocket":
            named = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("agent", [""])[0].encode()
        token = current_agent.set(agent_name(named))
        try:
            await self.app(scope, receive, send)
        finally:
            current_agent.reset(token)
