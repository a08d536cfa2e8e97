"""Shell integration: start bash or zsh with lookout's hooks, which mark prompts and commands in the output.

The hooks (app/terminal/shell/) emit OSC 133 A/B/C/D, OSC 633 E (the command line) and OSC 7 (the cwd).
Every 133/633 mark ends with the option `nonce=<hex>`, a secret of the session that only the shell knows,
so a program printing a mark cannot forge one. The shell gets the nonce through an inherited pipe (its
descriptor number in LOOKOUT_NONCE_FD), which the rc code reads, closes and unsets before anything else
runs: the nonce is in no file, command line or environment, and lookout takes it out of the output it
stores or streams (NonceFilter). The user's own rc files are sourced unchanged, never edited.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from app.core.private_files import DIR_MODE, open_file
from app.terminal.persistence import TerminalMeta

SHELLS = ("bash", "zsh")
NONCE_FD = "LOOKOUT_NONCE_FD"
"""The number of the descriptor the shell reads its nonce from (the number is no secret)."""
USER_ZDOTDIR = "LOOKOUT_USER_ZDOTDIR"
"""Carries the user's ZDOTDIR to lookout's .zshenv, which restores it and unsets this variable."""


def supported(argv: list[str]) -> bool:
    """Whether `argv` starts a bare interactive bash or zsh (the program alone, or with `-i`), the only
    commands that get the hooks: any other option may change what the shell reads at start."""
    return os.path.basename(argv[0]) in SHELLS and tuple(argv[1:]) in ((), ("-i",))


def nonce_option(nonce: str) -> str:
    """The last parameter of every genuine mark."""
    return f"nonce={nonce}"


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start a terminal's command."""

    argv: list[str]
    env: dict[str, str]
    nonce: str | None = None
    nonce_fd: int | None = None
    """The read end of a pipe that holds the nonce: for the child; the parent closes it once it spawned."""


def launch(meta: TerminalMeta, directory: Path, env: dict[str, str]) -> Launch:
    """How to start `meta.argv` with the hooks, and the session's nonce; unchanged (and no nonce) when the
    session has no shell integration. The rc files (no secret in them) go to `directory`/shell."""
    if not meta.shell_integration:
        return Launch(meta.argv, env)
    folder = directory / "shell"
    os.mkdir(folder, DIR_MODE)
    env = {k: v for k, v in env.items() if k not in (USER_ZDOTDIR, NONCE_FD)}
    if os.path.basename(meta.argv[0]) == "bash":
        rcfile = folder / "bashrc"
        _copy(rcfile, "bashrc.bash")
        argv = [meta.argv[0], "--rcfile", str(rcfile), *meta.argv[1:]]
    else:
        _copy(folder / ".zshenv", "zshenv.zsh")
        _copy(folder / ".zshrc", "zshrc.zsh")
        if "ZDOTDIR" in env:
            env[USER_ZDOTDIR] = env["ZDOTDIR"]
        env["ZDOTDIR"] = str(folder)
        argv = meta.argv
    nonce = secrets.token_hex(16)
    fd = _pipe_holding(nonce + "\n")
    return Launch(argv, {**env, NONCE_FD: str(fd)}, nonce, fd)


def _copy(path: Path, template: str) -> None:
    text = files("app.terminal").joinpath("shell", template).read_text()
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _pipe_holding(text: str) -> int:
    """The read end of a pipe that holds `text` (far less than a pipe's buffer) and has no writer left."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, text.encode())
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    return read_fd


class NonceFilter:
    """Takes the nonce out of a session's output before lookout stores or shows it (output.raw in the data
    dir, /raw, live streams): each occurrence becomes as many `*`, so every offset stays true; the scanner
    reads the original bytes. A read that ends in `nonce=` and the start of the nonce is held back until
    the next read, so a nonce split between two reads never shows in part."""

    def __init__(self, nonce: str) -> None:
        self._nonce = nonce.encode()
        self._mask = b"*" * len(self._nonce)
        self._held = b""

    def feed(self, data: bytes, final: bool = False) -> tuple[bytes, bytes]:
        """The output to process now (what was held, then `data`, less a new held tail unless `final`):
        as read, and with the nonce masked."""
        data = self._held + data
        cut = len(data) if final else self._tail_start(data)
        data, self._held = data[:cut], data[cut:]
        return data, data.replace(self._nonce, self._mask)

    def _tail_start(self, data: bytes) -> int:
        option = data.rfind(b"nonce=", max(0, len(data) - len(self._nonce) - 6))
        if option < 0:
            return len(data)
        rest = data[option + 6 :]
        return option + 6 if 0 < len(rest) < len(self._nonce) and self._nonce.startswith(rest) else len(data)
