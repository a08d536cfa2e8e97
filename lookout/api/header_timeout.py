"""uvicorn's HTTP protocol with a deadline on a request's line and headers.

uvicorn closes idle keep-alive connections, but once the first byte of a request has arrived it waits for the
rest forever: a client that sends half a request line holds a connection (and its memory) for good. This
protocol closes such a connection with a 408 when its request line and headers have not all arrived within
the deadline (counted from the connection, or from the first byte of a later request on it)."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s"
)
TIMEOUT_BODY = b'{"error":{"code":"request_timeout","message":"the request line and headers took too long"}}'


class _HeaderDeadline(HttpToolsProtocol):
    header_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

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


def header_deadline_protocol(timeout_s: float) -> type[HttpToolsProtocol]:
    """The protocol class to give uvicorn (`http=`), with this deadline."""
    return type("HeaderDeadlineProtocol", (_HeaderDeadline,), {"header_timeout_s": timeout_s})
