"""A private tmux server for the benchmarks: no user config, its own socket, removed when done."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import TracebackType


class TmuxServer:
    """`with TmuxServer("name") as tmux: tmux("new-session", ...)`; the server is killed on exit and its
    socket file removed (tmux 3.3a's kill-server leaves it behind)."""

    def __init__(self, name: str, env: dict[str, str] | None = None) -> None:
        self.name = f"{name}-{os.getpid()}"
        self.env = {**os.environ, **(env or {})}

    def __call__(self, *args: str) -> str:
        cmd = ["tmux", "-L", self.name, "-f", "/dev/null", *args]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, env=self.env).stdout

    def __enter__(self) -> TmuxServer:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        try:
            socket_path = Path(self("display", "-p", "#{socket_path}").strip())
        except subprocess.CalledProcessError:  # the server never started
            return
        subprocess.run(["tmux", "-L", self.name, "kill-server"], check=False, capture_output=True)
        socket_path.unlink(missing_ok=True)
