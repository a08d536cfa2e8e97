"""The terminals of a data dir seen without the daemon, as `tmux ls` and `tmux kill-session` see tmux's: which
holders run (`lookout ls`), and ending them (`lookout kill`). Blocking: for the command line."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.terminal.holder import protocol as proto
from app.terminal.persistence import load_meta

KILL_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class HeldTerminal:
    id: str
    name: str
    command: str
    pid: int | None
    status: str
    """running (its holder answered), or what meta.json says (exited, lost); `unreachable` when meta.json
    says running and no holder answers."""
    cols: int
    rows: int
    created_at: float
    note: str = ""


def terminals(data_dir: Path) -> list[HeldTerminal]:
    """Every terminal of the data dir, oldest first, with whether its holder runs now."""
    root, holders = data_dir / "terminals", data_dir / "holders"
    found = []
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        if directory.is_symlink() or not (directory / "meta.json").is_file():
            continue
        try:
            meta = load_meta(directory)
        except (OSError, ValueError, TypeError):
            continue
        status, note = meta.status, meta.lost_reason or ""
        cols, rows = meta.cols, meta.rows
        if status == "running":
            try:
                greeting = _greet(holders, meta.id)
                cols, rows = greeting["cols"], greeting["rows"]
            except (OSError, proto.ProtocolError) as exc:
                status, note = "unreachable", str(exc)
        found.append(
            HeldTerminal(meta.id, meta.name, meta.command, meta.pid, status, cols, rows, meta.created_at, note)
        )
    return sorted(found, key=lambda t: t.created_at)


def kill(data_dir: Path, terminal_id: str) -> int | None:
    """Stop a terminal through its holder (the signal ladder, as DELETE); returns the program's exit code.
    OSError when no holder runs for it, ProtocolError when the one there is not to be trusted."""
    sock = proto.connect(data_dir / "holders", terminal_id, KILL_TIMEOUT_S)
    with sock:
        proto.hello(sock)
        sock.sendall(proto.encode("stop"))
        lines = proto.LineBuffer()
        deadline = time.monotonic() + KILL_TIMEOUT_S
        while time.monotonic() < deadline:
            data = sock.recv(65536)
            if not data:
                return None
            for message in lines.feed(data):
                if message["op"] == "exit":
                    return int(message["code"])
        raise TimeoutError(f"terminal {terminal_id} did not end within {KILL_TIMEOUT_S:.0f} s")


def _greet(holders: Path, terminal_id: str) -> dict[str, Any]:
    sock = proto.connect(holders, terminal_id, 2.0)
    with sock:
        greeting, master = proto.hello(sock)
        if master is not None:
            os.close(master)
        sock.shutdown(socket.SHUT_RDWR)
        return greeting
