"""lookout.api.front_door: what the HTTP protocol answers itself, and what it leaves to the app."""

from __future__ import annotations

import json
import os

from lookout.api.front_door import FrontDoor, Streams
from lookout.api.handover import HandoverGate

LOCAL = [(b"host", b"127.0.0.1:8765")]


def _split(answer: bytes | None) -> tuple[bytes, dict]:
    assert answer is not None
    head, body = answer.split(b"\r\n\r\n", 1)
    assert b"connection: close" in head and f"content-length: {len(body)}".encode() in head
    return head.split(b"\r\n")[0], json.loads(body)


def test_healthz_is_answered_at_the_door_and_other_requests_are_not() -> None:
    door = FrontDoor(Streams(4), ())
    status, body = _split(door.answer(b"GET", b"/healthz", LOCAL, upgrade=False))
    assert status == b"HTTP/1.1 200 OK" and body["ok"] is True and body["pid"] == os.getpid()
    assert door.answer(b"POST", b"/healthz", LOCAL, upgrade=False) is None
    assert door.answer(b"GET", b"/v1/terminals", LOCAL, upgrade=False) is None
    assert door.answer(b"GET", b"/v1/events", LOCAL, upgrade=True) is None, "streams under the limit go on"


def test_a_stream_over_the_limit_is_refused_at_the_door_with_the_limit() -> None:
    streams = Streams(2)
    streams.open = 2
    status, body = _split(FrontDoor(streams, ()).answer(b"GET", b"/v1/events", LOCAL, upgrade=True))
    assert status == b"HTTP/1.1 503 Service Unavailable"
    assert body["error"]["code"] == "too_many_streams" and "LOOKOUT_MAX_STREAMS=2" in body["error"]["message"]


def test_foreign_hosts_and_origins_and_a_handover_are_left_to_the_app() -> None:
    streams = Streams(1)
    streams.open = 1
    door = FrontDoor(streams, ())
    for headers in ([(b"host", b"evil.example")], [*LOCAL, (b"origin", b"http://evil.example")], []):
        assert door.answer(b"GET", b"/healthz", headers, upgrade=False) is None, headers
        assert door.answer(b"GET", b"/v1/events", headers, upgrade=True) is None, headers
    gate = HandoverGate()
    gate.phase = "holding"
    assert FrontDoor(streams, (), gate).answer(b"GET", b"/healthz", LOCAL, upgrade=False) is None


def test_healthz_is_answered_at_the_door_while_a_new_daemon_takes_over() -> None:
    gate = HandoverGate()
    gate.adopting()
    status, body = _split(FrontDoor(Streams(4), (), gate).answer(b"GET", b"/healthz", LOCAL, upgrade=False))
    assert status == b"HTTP/1.1 200 OK" and body["pid"] == os.getpid()
    assert FrontDoor(Streams(4), (), gate).answer(b"GET", b"/v1/terminals", LOCAL, upgrade=False) is None
