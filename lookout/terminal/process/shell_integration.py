"""Shell integration: start bash or zsh with lookout's hooks, which mark prompts and commands in the output.

The hooks (lookout/terminal/process/shell/) emit OSC 133 A/B/C/D, OSC 633 E (the command line) and OSC 7 (the cwd).
Every 133/633 mark ends with the option `nonce=<hex>`, a secret of the session that only the shell knows,
so a program printing a mark cannot forge one. The shell gets the nonce through an inherited pipe (its
descriptor number in LOOKOUT_NONCE_FD, opened by the terminal's holder), which the rc code reads, closes and unsets before anything else
runs: the nonce is in no file, command line or environment, and lookout takes it out of the output it
stores or streams (lookout.terminal.holder.nonce). The user's own rc files are sourced unchanged, never edited.

What runs before the nonce is read is in no file a terminal's program can change: bash reads lookout's rc
text (read from the install tree when lookout started) from a sealed memfd its holder hands it
(`--rcfile /dev/fd/3`, lookout.terminal.holder.pty.RC_FD), which nobody can write, whoever they are. zsh reads
its rc files only by name from a folder (ZDOTDIR): it reads them from lookout's install tree, and lookout
compares them with the text it started with before each zsh it launches, refusing one that differs (409).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from lookout.core.errors import Conflict
from lookout.terminal.holder.pty import NONCE_FD, RC_FD, RC_FD_VAR
from lookout.terminal.journal.persistence import TerminalMeta

SHELLS = ("bash", "zsh")
USER_ZDOTDIR = "LOOKOUT_USER_ZDOTDIR"
"""Carries the user's ZDOTDIR to lookout's .zshenv, which restores it and unsets this variable."""
ZSH_FILES = (".zshenv", ".zshrc")


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
    rc: str | None = None
    """Given to the shell by the holder on RC_FD, a sealed memfd."""


def launch(meta: TerminalMeta, env: dict[str, str]) -> Launch:
    """How to start `meta.argv` with the hooks, and the session's nonce; unchanged (and no nonce) when the
    session has no shell integration. Conflict when zsh's rc files are no longer those lookout started with."""
    if not meta.shell_integration:
        return Launch(meta.argv, env)
    env = {k: v for k, v in env.items() if k not in (USER_ZDOTDIR, NONCE_FD, RC_FD_VAR)}
    if os.path.basename(meta.argv[0]) == "bash":
        argv = [meta.argv[0], "--rcfile", f"/dev/fd/{RC_FD}", *meta.argv[1:]]
        return Launch(argv, env, secrets.token_hex(16), _BASHRC)
    _check_zsh_files()
    if "ZDOTDIR" in env:
        env[USER_ZDOTDIR] = env["ZDOTDIR"]
    env["ZDOTDIR"] = str(ZSH_DIR)
    return Launch(meta.argv, env, secrets.token_hex(16))


def _check_zsh_files() -> None:
    """Conflict unless zsh's rc files in the install tree are still what lookout read when it started (a few
    microseconds: two small reads)."""
    for name, text in _ZSH_TEXTS.items():
        try:
            fd = os.open(ZSH_DIR / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                same = os.read(fd, len(text) + 1) == text
            finally:
                os.close(fd)
        except OSError:
            same = False
        if not same:
            raise Conflict(
                f"lookout's zsh rc file {ZSH_DIR / name} is not what lookout started with (changed since, by a "
                "program or an upgrade): restore it (reinstall lookout) and restart lookout, or open the terminal "
                "with shell_integration false",
                path=str(ZSH_DIR / name),
            )


_SHELL_FILES = files("lookout.terminal.process").joinpath("shell")
_BASHRC = _SHELL_FILES.joinpath("bashrc.bash").read_text()
ZSH_DIR = Path(str(_SHELL_FILES.joinpath("zsh"))).resolve()
"""The folder of the install tree that zsh's ZDOTDIR names (lookout is installed as files, not in a zip)."""
_ZSH_TEXTS = {name: (ZSH_DIR / name).read_bytes() for name in ZSH_FILES}
