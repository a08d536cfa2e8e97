"""What a terminal's spec asks for, made concrete: the argv of its command, its cwd and its environment."""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
from pathlib import Path

from lookout.core.errors import BadInput

SHELLS = {"bash", "zsh", "sh", "dash", "fish", "ksh", "mksh", "tcsh", "csh"}
_CHILD_ENV_DROP = ("LOOKOUT_",)


def user_shell() -> str:
    """$SHELL, else the password database's shell, else /bin/sh."""
    shell = os.environ.get("SHELL")
    if not shell:
        try:
            shell = pwd.getpwuid(os.getuid()).pw_shell
        except KeyError:
            shell = ""
    return shell if shell and os.access(shell, os.X_OK) else "/bin/sh"


def argv_of(command: str | list[str] | None) -> tuple[list[str], str, bool]:
    """(argv, the command as shown, whether the leader is an interactive shell)."""
    if command is None:
        shell = user_shell()
        return [shell], shell, True
    if isinstance(command, str):
        if not command.strip():
            raise BadInput("command is empty", field="command")
        words = command.split()
        if os.path.basename(words[0]) in SHELLS and words[1:] in ([], ["-i"]):
            return words, command, True  # a shell named bare: itself, so it is a shell session (with hooks)
        return [user_shell(), "-c", command], command, False
    if not command or not command[0]:
        raise BadInput("command is an empty list", field="command")
    is_shell = os.path.basename(command[0]) in SHELLS and "-c" not in command[1:]
    return list(command), shlex.join(command), is_shell


def checked_cwd(cwd: str | None) -> str:
    path = Path(cwd).expanduser() if cwd else Path.home()
    if not path.is_dir():
        raise BadInput(f"cwd {str(path)!r} is not a directory", field="cwd")
    return str(path.resolve())


def child_env(extra: dict[str, str] | None) -> dict[str, str]:
    """The daemon's environment without its own secrets, a capable TERM, and what the client added."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CHILD_ENV_DROP)}
    env.update(TERM="xterm-256color", COLORTERM="truecolor")
    env.setdefault("LANG", "C.UTF-8")
    for key, value in (extra or {}).items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise BadInput(f"invalid environment variable {key!r}", field="env")
        env[key] = value
    return env


def check_executable(program: str, path: str | None) -> None:
    if shutil.which(program, path=path) is None:
        raise BadInput(f"command not found: {program!r}", field="command")
