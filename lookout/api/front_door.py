"""What the HTTP protocol answers itself, as a request's headers complete, before any per-connection work.

Under a flood of WebSocket handshakes (2,000 at once on one terminal), each one the app sees costs the event
loop a protocol switch, the WebSocket handshake and a task through the middleware; `/healthz` arriving
behind them waited for all of those (1.7 to 3.8 s in bench/stream_flood.py). So the protocol
(lookout.api.header_timeout) asks the front door first: a WebSocket upgrade while `max_streams` are open is
refused here with the 503 the Guard would give, and `GET /healthz` is answered here; both only for an
allowed Host and Origin (anything else goes on to the Guard, which refuses it with the reason) and only
while the daemon serves or, new in a hot restart, takes over (while it is being replaced the middleware
decides)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import orjson

from lookout import __version__
from lookout.api.hosts import host_allowed, normalized_hosts, origin_allowed

if TYPE_CHECKING:
    from lookout.api.handover import HandoverGate

HEALTH = "/healthz"


class Streams:
    """The WebSocket connections let in and not yet ended, against their limit (`max_streams`): counted by
    the Guard, read by the front door."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0

    @property
    def full(self) -> bool:
        return self.open >= self.limit

    def refusal(self) -> str:
        return (f"{self.open} WebSocket connections are open, the limit is LOOKOUT_MAX_STREAMS={self.limit}: "
                "close one, or retry later")  # fmt: skip


class FrontDoor:
    def __init__(self, streams: Streams, allowed_hosts: tuple[str, ...], gate: HandoverGate | None = None) -> None:
        self.streams = streams
        self.allowed_hosts = normalized_hosts(allowed_hosts)
        self.gate = gate
        self.health = orjson.dumps({"ok": True, "version": __version__, "pid": os.getpid()})

    def answer(self, method: bytes, path: bytes, headers: list[tuple[bytes, bytes]], upgrade: bool) -> bytes | None:
        """The whole HTTP answer to give at once (the connection is then closed), or None: the app answers."""
        if self.gate is not None and self.gate.phase not in ("serving", "adopting"):
            return None
        if upgrade:
            if not self.streams.full:
                return None
        elif method != b"GET" or path != HEALTH.encode():
            return None
        host, origin = _header(headers, b"host"), _header(headers, b"origin")
        if not (host_allowed(host, self.allowed_hosts) and origin_allowed(origin, host or "")):
            return None
        if upgrade:
            body = orjson.dumps({"error": {"code": "too_many_streams", "message": self.streams.refusal()}})
            return _response(b"503 Service Unavailable", body)
        return _response(b"200 OK", self.health)


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


def _response(status: bytes, body: bytes) -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip
