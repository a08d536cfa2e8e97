"""Shell integration: start bash or zsh with lookout's hooks, which mark prompts and commands in the output.

The hooks (app/terminal/shell/) emit OSC 133 A/B/C/D, OSC 633 E (the command line) and OSC 7 (the cwd).
Every 133/633 mark ends with the option `nonce=<hex>`, a secret of the session that only the shell knows,
so a program printing a mark cannot forge one. The shell gets the nonce through an inherited pipe (its
descriptor number in LOOKOUT_NONCE_FD, opened by the terminal's holder), which the rc code reads, closes and unsets before anything else
runs: the nonce is in no file, command line or environment, and lookout takes it out of the output it
stores or streams (app.terminal.holder.nonce). The user's own rc files are sourced unchanged, never edited.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from app.core.private_files import DIR_MODE, open_file
from app.terminal.holder.pty import NONCE_FD
from app.terminal.persistence import TerminalMeta

SHELLS = ("bash", "zsh")
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
    return Launch(argv, env, secrets.token_hex(16))


def _copy(path: Path, template: str) -> None:
    text = files("app.terminal").joinpath("shell", template).read_text()
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w") as f:
        f.write(text)
