"""uvicorn's HTTP protocol with a deadline on a request's line and headers.

uvicorn closes idle keep-alive connections, but once the first byte of a request has arrived it waits for the
rest forever: a client that sends half a request line holds a connection (and its memory) for good. This
protocol closes such a connection with a 408 when its request line and headers have not all arrived within
the deadline (counted from the connection, or from the first byte of a later request on it). As a request's
headers complete, the front door (lookout.api.front_door) may answer it at once (`/healthz`, a WebSocket over
the limit), before any per-connection work."""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from lookout.api.front_door import FrontDoor

TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s"
)
TIMEOUT_BODY = b'{"error":{"code":"request_timeout","message":"the request line and headers took too long"}}'


class _HeaderDeadline(HttpToolsProtocol):
    header_timeout_s: float = 10.0
    front_door: FrontDoor | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._answered = False
        """The front door answered: the connection closes, nothing more of it is read."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        if self.front_door is not None and (self.cycle is None or self.cycle.response_complete):
            upgrade = bool(self.parser.should_upgrade()) and self._should_upgrade()
            answer = None
            if upgrade or self.url.startswith(b"/healthz"):
                try:
                    path = httptools.parse_url(self.url).path
                except httptools.HttpParserInvalidURLError:
                    path = None  # the app says what is wrong with it
                if path is not None:
                    answer = self.front_door.answer(self.parser.get_method(), path, self.headers, upgrade)
            if answer is not None:
                self._answered = True
                self.transport.write(answer)
                self.transport.close()
                return
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        if not self._answered:
            super().data_received(data)

    def handle_websocket_upgrade(self) -> None:
        if not self._answered:
            super().handle_websocket_upgrade()

    def on_body(self, body: bytes) -> None:
        if not self._answered:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self._answered:
            super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expired(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(TIMEOUT_RESPONSE % (len(TIMEOUT_BODY), TIMEOUT_BODY))
            self.transport.close()


def header_deadline_protocol(timeout_s: float, front_door: FrontDoor | None = None) -> type[HttpToolsProtocol]:
    """The protocol class to give uvicorn (`http=`), with this deadline (and this front door)."""
    return type("HeaderDeadlineProtocol", (_HeaderDeadline,), {"header_timeout_s": timeout_s,
                                                               "front_door": front_door})  # fmt: skip
