"""Shell integration: start bash or zsh with lookout's hooks, which mark prompts and commands in the output.

The hooks (app/terminal/shell/) emit OSC 133 A/B/C/D, OSC 633 E (the command line) and OSC 7 (the cwd).
Every 133/633 mark ends with the option `nonce=<hex>`, a secret of the session that only the shell knows
(an unexported variable in a generated rc file of mode 0600), so a program printing a mark cannot forge
one. The user's own rc files are sourced unchanged, never edited.
"""
from __future__ import annotations

import os
import secrets
from importlib.resources import files
from pathlib import Path

from app.core.private_files import DIR_MODE, open_file
from app.terminal.persistence import TerminalMeta

SHELLS = ("bash", "zsh")
_NONCE = "@NONCE@"
USER_ZDOTDIR = "LOOKOUT_USER_ZDOTDIR"
"""Carries the user's ZDOTDIR to lookout's .zshenv, which restores it and unsets this variable."""


def supported(argv: list[str]) -> bool:
    """Whether `argv` starts a bare interactive bash or zsh (the program alone, or with `-i`), the only
    commands that get the hooks: any other option may change what the shell reads at start."""
    return os.path.basename(argv[0]) in SHELLS and tuple(argv[1:]) in ((), ("-i",))


def nonce_option(nonce: str) -> str:
    """The last parameter of every genuine mark."""
    return f"nonce={nonce}"


def launch(
    meta: TerminalMeta, directory: Path, env: dict[str, str]
) -> tuple[list[str], dict[str, str], str | None]:
    """The argv and environment that start `meta.argv` with the hooks, and the session's nonce; unchanged
    (and no nonce) when the session has no shell integration. The rc files go to `directory`/shell."""
    if not meta.shell_integration:
        return meta.argv, env, None
    nonce = secrets.token_hex(16)
    folder = directory / "shell"
    os.mkdir(folder, DIR_MODE)
    if os.path.basename(meta.argv[0]) == "bash":
        rcfile = folder / "bashrc"
        _write(rcfile, "bashrc.bash", nonce)
        return [meta.argv[0], "--rcfile", str(rcfile), *meta.argv[1:]], env, nonce
    _write(folder / ".zshenv", "zshenv.zsh", nonce)
    _write(folder / ".zshrc", "zshrc.zsh", nonce)
    env = {k: v for k, v in env.items() if k != USER_ZDOTDIR}
    if "ZDOTDIR" in env:
        env[USER_ZDOTDIR] = env["ZDOTDIR"]
    env["ZDOTDIR"] = str(folder)
    return meta.argv, env, nonce


def _write(path: Path, template: str, nonce: str) -> None:
    text = files("app.terminal").joinpath("shell", template).read_text()
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w") as f:
        f.write(text.replace(_NONCE, nonce))
