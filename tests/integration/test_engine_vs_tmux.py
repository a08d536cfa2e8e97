"""Differential test: the same bytes through tmux (the oracle) and through each screen engine."""
from __future__ import annotations

import os
import random
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from lookout.terminal.screen.engines import ENGINE_NAMES, create_engine
from tests.support.captures import CAPTURES, COLS, EMOJI_TEXT, FAMILY, RAINBOW_FLAG, ROWS, SCOTLAND
from tests.support.polling import eventually

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")





def visible(rows: list[str]) -> list[str]:
    """Rows right-stripped (code point for code point: combining marks, variation selectors and ZWJ
    sequences are compared as tmux keeps them), trailing empty rows dropped."""
    rows = [row.rstrip() for row in rows]
    while rows and not rows[-1]:
        rows.pop()
    return rows


# tmux 3.3 forgets a ZWJ that ends one of its reads of the pane (the flag lives in a per-read context), so
# the character after it starts a cell of its own: the stream reaches tmux in writes it reads whole (small,
# a moment apart), none of them ending on a ZWJ or inside a character.
WRITER = """
import os, sys, time
data = open(sys.argv[1], "rb").read()
start = 0
while start < len(data):
    end = min(start + 512, len(data))
    while end < len(data) and (data[end] & 0xC0 == 0x80 or data[end - 3:end] == "\\u200d".encode()):
        end += 1
    os.write(1, data[start:end])
    start = end
    time.sleep(0.002)
"""


def run_tmux(data: bytes, tmp_path: Path) -> tuple[list[str], tuple[int, int], bool]:
    """Screen text, cursor (col, row) and alternate-screen flag of a tmux pane that was sent `data` raw."""
    stream = tmp_path / "stream.bin"
    stream.write_bytes(data)
    tmux = ["tmux", "-L", f"lookout-test-{uuid.uuid4().hex[:12]}", "-f", "/dev/null"]
    # -opost: the bytes reach tmux as they are (no ONLCR), as they reach the engines; -echo: tmux's answers
    # to the terminal queries in the stream (vim asks for the cursor position) are not echoed onto the pane.
    writer = f"{shlex.quote(sys.executable)} -c {shlex.quote(WRITER)} {shlex.quote(str(stream))}"
    # then a title that only parsing every byte before it sets (after an ST that ends any string the stream
    # left open): tmux has drained the pty once the pane has that title
    drained = f"drained-{uuid.uuid4().hex[:12]}"
    title = f"printf '\\033\\\\\\033]2;{drained}\\033\\\\'"
    command = f"stty -opost -echo; {writer}; {title}; {shlex.join(tmux)} wait-for -S done; sleep 600"
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    subprocess.run([*tmux, "new-session", "-d", "-x", str(COLS), "-y", str(ROWS), command], env=env, check=True)
    socket = subprocess.run(
        [*tmux, "display", "-p", "#{socket_path}"], capture_output=True, text=True, check=False
    ).stdout.strip()
    try:
        subprocess.run([*tmux, "wait-for", "done"], timeout=120, check=True)

        def shown_title() -> str:
            return subprocess.run([*tmux, "display", "-p", "#{pane_title}"], capture_output=True, text=True,
                                  check=True).stdout.strip()  # fmt: skip

        eventually(lambda: shown_title() == drained, timeout=60, what="tmux to draw every byte")
        fmt = "#{pane_width}x#{pane_height} #{cursor_x} #{cursor_y} #{alternate_on}"
        state = subprocess.run([*tmux, "display", "-p", fmt], capture_output=True, text=True, check=True)
        pane = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True, check=True)
        current = state.stdout + pane.stdout
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
        if socket:
            Path(socket).unlink(missing_ok=True)  # tmux 3.3 leaves it behind
    state, *rows = current.split("\n")
    size, x, y, alt = state.split()
    assert size == f"{COLS}x{ROWS}"
    return rows[:ROWS], (int(x), int(y)), alt == "1"


def ls_color(rng: random.Random) -> bytes:
    """`ls -la --color` scrolling past the screen, NFD and emoji names, then columns after them."""
    colours = ["01;34", "01;32", "01;36", "00", "38;5;208", "01;31", "38;2;200;120;40", "30;42"]
    names = ["src", "README.md", "build.sh", "caf\u00e9", "cafe\u0301-nfd", "\u2764\ufe0f-notes", "\u4e2d\u6587.txt"]
    out = ["$ ls --color=always -la\r\n"]
    for i in range(40):
        name = rng.choice(names) + str(i)
        mode = rng.choice(["drwxr-xr-x", "-rw-r--r--", "-rwxr-xr-x"])
        out.append(f"{mode} 1 user user {rng.randint(0, 99999):>6} Jan {i % 28 + 1:>2} 12:00 "
                   f"\x1b[0m\x1b[{rng.choice(colours)}m{name}\x1b[0m\r\n")
    out.append("\x1b[01;34mdir\x1b[0m  \x1b[01;32mcafe\u0301\x1b[0m  \u2764\ufe0f.txt  plain.txt")
    out.append("\x1b[60Gcolumn 60\r\n$ ")  # shows any column the names above took or gave back
    return "".join(out).encode()


def less_like(rng: random.Random) -> bytes:
    """A pager: alt screen, cursor-addressed page, reverse-video prompt, scrolling both ways."""
    words = ["lorem", "ipsum", "dolor", "sit", "amet"]
    text = [f"{i:4d}  " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 14))) for i in range(60)]
    out = ["$ less notes.txt\r\n", "\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[H\x1b[2J"]
    for row in range(ROWS - 1):
        out.append(f"\x1b[{row + 1};1H{text[row]}\x1b[K")
    out.append(f"\x1b[{ROWS};1H\x1b[7mnotes.txt lines 1-23\x1b[27m\x1b[K")
    for line in text[23:30]:  # forward: erase the prompt, print at the bottom, let it scroll
        out.append(f"\r\x1b[K{line}\r\n\x1b[7m:\x1b[27m\x1b[K")
    for line in reversed(text[:3]):  # backward: reverse index at the top
        out.append(f"\x1b[H\x1bM{line}\x1b[{ROWS};1H\x1b[K\x1b[7m:\x1b[27m")
    out.append("\x1b[5;10H\x1b[1;4mmatch\x1b[m\x1b[24;2H")
    return "".join(out).encode()


def progress_bars(rng: random.Random) -> bytes:
    """pip/curl style \r redraws, a spinner with backspaces, docker-style multi-line bars with CUU."""
    out = ["$ fetch\r\n"]
    for percent in range(0, 101, 7):
        filled = percent * 30 // 100
        bar = f"[{'#' * filled}{' ' * (30 - filled)}]"
        out.append(f"\r\x1b[32m{bar}\x1b[0m {percent:3d}% {rng.randint(1, 999)} kB/s\x1b[K")
    out.append("\r\nworking  " + "".join(f"\b{frame}" for frame in "|/-\\" * 5) + "\b done\r\n")
    layers = ["a1b2", "c3d4", "e5f6"]
    out += [f"{layer}: Waiting\r\n" for layer in layers]
    for step in range(1, 6):
        out.append(f"\x1b[{len(layers)}A")
        for index, layer in enumerate(layers):
            width = min(step * (index + 1) * 4, 40)
            out.append(f"\x1b[2K{layer}: Downloading [{'=' * width}>{' ' * (40 - width)}]\r\n")
    out.append("$ ")
    return "".join(out).encode()


def vim_editing(rng: random.Random) -> bytes:
    """An editor on the alt screen: terminal queries, scroll region, IL/DL, ICH/DCH/ECH."""
    out = [f"$ echo line {i}\r\nline {i}\r\n" for i in range(5)] + ["$ vim file.py\r\n"]
    out.append("\x1b[?1049h\x1b[>4;2m\x1b[?1h\x1b=\x1b[H\x1b[2J")
    code = [f"def f{i}(x):  # {rng.random():.6f}" for i in range(40)]
    for row in range(ROWS - 1):
        out.append(f"\x1b[{row + 1};1H\x1b[33m{row + 1:3d} \x1b[0m{code[row]}")
    out.append(f"\x1b[{ROWS};1H\x1b[1m-- INSERT --\x1b[0m\x1b[2 q\x1b[{ROWS};60H1,1  Top")
    out.append(f"\x1b[1;{ROWS - 1}r")
    for row in range(ROWS - 1, ROWS + 5):  # scroll the text area, keep the status line
        out.append(f"\x1b[{ROWS - 1};1H\n\x1b[33m{row + 1:3d} \x1b[0m{code[row]}")
    out.append("\x1b[5;1H\x1b[2L\x1b[5;5Hinserted\x1b[10;1H\x1b[3M\x1b[r")
    out.append("\x1b[3;9H\x1b[4@XYZW\x1b[4;9H\x1b[5P\x1b[6;9H\x1b[6X\x1b[24;1H\x1b[2K:wq\x1bP+q5463\x1b\\")
    return "".join(out).encode()


def vim_exit(rng: random.Random) -> bytes:
    """The editor quits: the shell screen comes back and the shell goes on."""
    return vim_editing(rng) + b"\x1b[?1049l\x1b[>4;m\x1b[?1l\x1b>$ echo back\r\nback\r\n$ "


def long_lines(rng: random.Random) -> bytes:
    """Wrapping: long lines, a line of exactly 80 columns, a wide character at the edge; tabs; bare LF."""
    out = ["$ cat long.txt\r\n"]
    for _ in range(3):
        out.append("".join(rng.choice("abcdefghij ") for _ in range(rng.randint(150, 260))) + "\r\n")
    out.append("x" * 80 + "\r\n")
    out.append("y" * 79 + "\u4e2d\u6587 wide wraps\r\n")
    out.append("\x1b[36m" + "\u4e2d" * 45 + "\x1b[0m\r\n")
    out.append("a\tb\tc\t\td\r\n" + "tab\tstops\tafter\ttext\r\n" + "stair\ncase\nwithout CR\r\n")
    out.append("z" * 85 + "\b\b\bBACK\r\n$ ")
    return "".join(out).encode()


def emoji(rng: random.Random) -> bytes:
    """Cells of several code points: ZWJ sequences, variation selectors, flags, skin tones, keycaps and
    combining marks, in colour, wrapping at the right edge, overwritten, and in the middle of a line."""
    clusters = [FAMILY, FAMILY + "\u200d\U0001F466", "\u2764\ufe0f", "\u2764\ufe0e", "\U0001F1E9\U0001F1EA",
                "\U0001F44D\U0001F3FD", "1\ufe0f\u20e3", "e\u0301", "a\u0301\u0302", RAINBOW_FLAG, "\u2b50\ufe0f",
                "\u845b\U000E0100", "x\u200by", SCOTLAND]
    out = ["$ cat emoji.txt\r\n"]
    for i in range(30):
        words = [rng.choice(clusters) + rng.choice(["", " ", "ab", "\u4e2d"]) for _ in range(rng.randint(3, 30))]
        out.append(f"\x1b[3{i % 8}m{i:2d} " + "".join(words) + "\x1b[0m\r\n")
    out.append(f"\x1b[3;5H{FAMILY}\x1b[4;5H\u2764\ufe0f\x1b[5;79He\u0301\u2764\ufe0f\x1b[24;1H$ ")
    return "".join(out).encode()


STREAMS: dict[str, Callable[[random.Random], bytes]] = {
    stream.__name__: stream
    for stream in (ls_color, less_like, progress_bars, vim_editing, vim_exit, long_lines, emoji)
}


def assert_engines_match_tmux(data: bytes, tmp_path: Path) -> None:
    tmux_rows, tmux_cursor, tmux_alt = run_tmux(data, tmp_path)
    assert visible(tmux_rows), "tmux showed nothing: the oracle did not run"
    for name in ENGINE_NAMES:
        engine = create_engine(name, COLS, ROWS, 1000)
        for start in range(0, len(data), 397):  # odd-sized feeds split sequences and characters
            engine.feed(data[start:start + 397])
        assert visible(engine.text_rows()) == visible(tmux_rows), name
        cursor = engine.cursor()
        assert (cursor.col, cursor.row) == tmux_cursor, name
        assert engine.alt_screen == tmux_alt, name


@pytest.mark.parametrize("stream", STREAMS)
def test_engines_match_tmux(stream: str, tmp_path: Path) -> None:
    assert_engines_match_tmux(STREAMS[stream](random.Random(stream)), tmp_path)


@pytest.mark.parametrize("capture", CAPTURES)
def test_engines_match_tmux_on_real_captures(capture: str, tmp_path: Path) -> None:
    program, record = CAPTURES[capture]
    assert shutil.which(program), f"{program} is not installed (make system-deps installs it)"
    (tmp_path / "emoji.txt").write_text(EMOJI_TEXT)
    data = record(tmp_path)
    assert len(data) > 200, data
    assert_engines_match_tmux(data, tmp_path)
