"""uvicorn's server, with what a daemon that hands over to another needs: it tells its lifecycle of a stop
signal first, says when it accepts, stops accepting without stopping, and accepts again."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from types import FrameType

import uvicorn


class DaemonServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_stop = on_stop
        self.accepting = asyncio.Event()
        """Set once the app has started and the listening sockets are served."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.accepting.set()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._on_stop()
        super().handle_exit(sig, frame)

    def stop_accepting(self) -> None:
        """Close the listening sockets this process has (a socket shared with another process goes on)."""
        for server in self.servers:
            server.close()

    async def accept_again(self, sock: socket.socket) -> None:
        config = self.config

        def protocol() -> asyncio.Protocol:
            return config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=self.server_state, app_state=self.lifespan.state
            )

        self.servers = [await asyncio.get_running_loop().create_server(protocol, sock=sock, backlog=config.backlog)]
