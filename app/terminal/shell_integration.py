"""Shell integration: start bash or zsh with lookout's hooks, which mark prompts and commands in the output.

The hooks (app/terminal/shell/) emit OSC 133 A/B/C/D, OSC 633 E (the command line) and OSC 7 (the cwd).
Every 133/633 mark ends with the option `nonce=<hex>`, a secret of the session that only the shell knows,
so a program printing a mark cannot forge one. The shell gets the nonce through an inherited pipe (its
descriptor number in LOOKOUT_NONCE_FD, opened by the terminal's holder), which the rc code reads, closes and unsets before anything else
runs: the nonce is in no file, command line or environment, and lookout takes it out of the output it
stores or streams (app.terminal.holder.nonce). The user's own rc files are sourced unchanged, never edited.

lookout's rc files hold no secret, so every terminal's shell reads the same ones, in the data dir's
`shell/<digest of their text>/`: written once, not once per terminal (making a file is the dearest step of
opening a terminal), and named by their text, so a shell started by another version of lookout (a hot
restart, an upgrade) reads its own version's.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from app.core.errors import LookoutError
from app.core.private_files import make_dir, read_bytes
from app.core.storage import atomic_write_bytes
from app.terminal.holder.pty import NONCE_FD
from app.terminal.persistence import TerminalMeta

SHELLS = ("bash", "zsh")
RC_FILES = {"bashrc": "bashrc.bash", ".zshenv": "zshenv.zsh", ".zshrc": "zshrc.zsh"}
"""Each rc file lookout's shells read, by its name in the rc folder, and its template in app/terminal/shell."""
USER_ZDOTDIR = "LOOKOUT_USER_ZDOTDIR"
"""Carries the user's ZDOTDIR to lookout's .zshenv, which restores it and unsets this variable."""


def supported(argv: list[str]) -> bool:
    """Whether `argv` starts a bare interactive bash or zsh (the program alone, or with `-i`), the only
    commands that get the hooks: any other option may change what the shell reads at start."""
    return os.path.basename(argv[0]) in SHELLS and tuple(argv[1:]) in ((), ("-i",))


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start a terminal's command."""

    argv: list[str]
    env: dict[str, str]
    nonce: str | None = None
    """Given to the shell by the holder, through a pipe whose descriptor number it puts in NONCE_FD."""


def launch(meta: TerminalMeta, data_dir: Path, env: dict[str, str]) -> Launch:
    """How to start `meta.argv` with the hooks, and the session's nonce; unchanged (and no nonce) when the
    session has no shell integration. The rc files are the data dir's (`rc_folder`, checked when the daemon
    starts; written again here only when one has gone since)."""
    if not meta.shell_integration:
        return Launch(meta.argv, env)
    folder = _folder(data_dir)
    if not all(os.path.isfile(folder / name) for name in RC_FILES):
        rc_folder(data_dir)
    env = {k: v for k, v in env.items() if k not in (USER_ZDOTDIR, NONCE_FD)}
    if os.path.basename(meta.argv[0]) == "bash":
        argv = [meta.argv[0], "--rcfile", str(folder / "bashrc"), *meta.argv[1:]]
    else:
        if "ZDOTDIR" in env:
            env[USER_ZDOTDIR] = env["ZDOTDIR"]
        env["ZDOTDIR"] = str(folder)
        argv = meta.argv
    return Launch(argv, env, secrets.token_hex(16))


def rc_folder(data_dir: Path) -> Path:
    """The folder of this lookout's rc files in `data_dir`, each checked and written again (atomically, 0600)
    when missing or not what this lookout's says (a torn write, another hand). Blocking (microseconds when
    they are there, the time to write three files when not: the daemon checks them in a thread at start)."""
    folder = _folder(data_dir)
    make_dir(folder)
    for name, text in _TEXTS.items():
        try:
            same = read_bytes(folder / name, len(text)) == text
        except (OSError, ValueError, LookoutError):
            same = False
        if not same:
            atomic_write_bytes(folder / name, text)
    return folder


def _folder(data_dir: Path) -> Path:
    return data_dir / "shell" / _DIGEST


_TEXTS = {name: files("app.terminal").joinpath("shell", template).read_bytes() for name, template in RC_FILES.items()}
_DIGEST = hashlib.sha256(b"".join(_TEXTS.values())).hexdigest()[:16]
