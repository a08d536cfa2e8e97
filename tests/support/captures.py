"""Real captures: what real programs (vim, less, htop, git, cat) write to a real 80x24 PTY, recorded when a test
runs, to be replayed into tmux and into the screen engines."""
from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from pathlib import Path

from ptyprocess import PtyProcess

COLS, ROWS = 80, 24
FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"
RAINBOW_FLAG = "\U0001F3F3\ufe0f\u200d\U0001F308"
SCOTLAND = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"  # 28 bytes: tmux keeps 20
REPO = Path(__file__).resolve().parents[2]


EMOJI_TEXT = "\n".join([
    f"Families: {FAMILY} {FAMILY}\u200d\U0001F466, a couple \U0001F469\u200d\u2764\ufe0f\u200d\U0001F468",
    f"Flags: \U0001F1E9\U0001F1EA \U0001F1EB\U0001F1F7 {RAINBOW_FLAG} \U0001F3F4\u200d\u2620\ufe0f {SCOTLAND}",
    "Skin tones: \U0001F44D\U0001F3FB \U0001F44D\U0001F3FD \U0001F44B\U0001F3FF \U0001F9D1\U0001F3FE\u200d\U0001F4BB",
    "Hearts: \u2764\ufe0f \u2764 \u2764\ufe0e \u2665\ufe0f \u263a\ufe0f \u2b50\ufe0f \u2601\ufe0f",
    "Keycaps: 1\ufe0f\u20e3 #\ufe0f\u20e3",
    "Accents: cafe\u0301 re\u0301sume\u0301 na\u0308ive Spin\u0308al Ta\u0302\u0301p \u1100\u1161 \u0915\u094d\u0937",
    "Mixed: \u4e2d\u6587 \U0001F600 \U0001F680 x\u200by \u845b\U000E0100 done",
] + [f"line {i}: " + "\U0001F600\u2764\ufe0f" * (i % 7) + "e\u0301" * (i % 5) + " end" for i in range(40)]) + "\n"
CAPTURE_ENV = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LESSCHARSET": "utf-8",
               "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1", "HTOPRC": "/dev/null"}


def read_until_quiet(proc: PtyProcess, quiet: float, timeout: float, shown: bytes | None = b"") -> bytes:
    """Output of `proc` until `shown` has appeared in it and it has then written nothing for `quiet` seconds (or
    it has ended, or `timeout`; None: until it has ended): quiet alone is no sign that a program on a loaded
    machine has drawn its screen."""
    out = bytearray()
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([proc.fd], [], [], quiet if shown is not None and shown in out else left)
        if not ready:
            break
        try:
            chunk = os.read(proc.fd, 65536)
        except OSError:  # EIO: the program ended
            break
        if not chunk:
            break
        out += chunk
    return bytes(out)


def pty_capture(argv: list[str], cwd: Path, keys: list[bytes], shown: bytes | None) -> bytes:
    """What `argv` writes to a real 80x24 PTY: its first screen (read until it shows `shown`, then until it is
    quiet; None: until it ends), then after each of `keys` typed, until it is quiet; then it is ended. A capture cut early is still a
    valid stream: tmux and the engines replay the same bytes."""
    proc = PtyProcess.spawn(argv, cwd=str(cwd), env={**os.environ, **CAPTURE_ENV}, dimensions=(ROWS, COLS))
    try:
        out = read_until_quiet(proc, 1.0, 120, shown)
        for key in keys:
            proc.write(key)
            out += read_until_quiet(proc, 1.0, 20)
    finally:
        proc.terminate(force=True)
    return out


def capture_vim(tmp_path: Path) -> bytes:
    argv = ["vim", "-u", "NONE", "-i", "NONE", "-N", "-n", "emoji.txt"]
    return pty_capture(argv, tmp_path, [b"20j", b":set nu\r"], b"Families")


def capture_less(tmp_path: Path) -> bytes:
    return pty_capture(["less", "-R", "emoji.txt"], tmp_path, [b" ", b"/line 3\r"], b"Families")


def capture_htop(tmp_path: Path) -> bytes:
    # a redraw every 5 s (one every 0.5 s was never quiet for 1 s: each capture ran to its timeouts, 140 s)
    return pty_capture(["htop", "-d", "50"], tmp_path, [b"t"], b"F10")


def capture_git_log(tmp_path: Path) -> bytes:
    return pty_capture(["git", "-C", str(REPO), "--no-pager", "log", "--graph", "--all", "--color=always",
                        "--decorate", "--format=%h %s %an", "-n", "60"], tmp_path, [], None)


def capture_cat_emoji(tmp_path: Path) -> bytes:
    return pty_capture(["cat", "emoji.txt"], tmp_path, [], None)


CAPTURES: dict[str, tuple[str, Callable[[Path], bytes]]] = {
    "vim": ("vim", capture_vim), "less": ("less", capture_less), "htop": ("htop", capture_htop),
    "git_log_graph": ("git", capture_git_log), "cat_emoji": ("cat", capture_cat_emoji),
}


