"""Token benchmark of the layered screenshot: what the screens of five real programs cost an agent.

Each program runs at 120x40 twice, side by side in one run: in tmux (the peer: a private server with no
config, TERM=xterm-256color) and in lookout (a `lookout serve` subprocess). Once the screen has been
still for a while, it is read

- from tmux as `capture-pane -p` (plain text) and `capture-pane -e -p` (the peer's way of carrying
  colours and attributes: the text with SGR escapes in it);
- from lookout as `GET /screen` with the default layers (text,cursor), with all layers (encoding auto,
  runs and cells), and its plain text (the `text` rows joined by newlines: the floor).

Tokens are o200k_base counts (quicktok); each lookout figure is the response's own `tokens` field, which
is checked against a count of the body. The programs: a dense `ls -la --color`, `git log --stat` of a
temporary repository with 40 commits, `htop` (or interactive `top` when htop is missing: `top -b` would
print plain text without attributes), vim (defaults.vim, so syntax highlighting) on a Python file, and
gcc's coloured diagnostics for a broken C file. Interactive programs show the time and the processes of
the moment, so their screens differ slightly between the two terminals.

It also times the pure layer builder (`lookout.terminal.screen.layers.render`) in this process on each screen
rebuilt from lookout's journal: every layer, each encoding, median of `--repeat` builds.

Goals: text,cursor costs at most 10% more than the plain text of the dense `ls -la` screen; all layers
(default encoding) cost fewer tokens than tmux `capture-pane -e -p` on every screen; every layer of a
full screen is built in under 5 ms. The last line of the output is one JSON object with the figures.

Run it from the repository root after `make test` (or `make bench`):

    .venv/bin/python bench/terminal_tokens.py [--repeat 200]
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import COLS, REPO, ROWS, Daemon
from tmux_server import TmuxServer

sys.path.insert(0, str(REPO))
from lookout.core.tokens import count_tokens
from lookout.terminal.screen.engines import create_engine
from lookout.terminal.screen.layers import LAYERS, ViewOptions, render
from lookout.terminal.screen.view import screen_data

STILL_S = 1.0
"""A screen counts as drawn once it has not changed for this long."""
TIMEOUT_S = 30.0
GOAL_TEXT_OVERHEAD = 0.10
GOAL_ACT_TOKENS = 50
ACT_TOKENS_BEFORE = 134
"""The same act answer's tokens beside its rows before answers were lean (measured at commit 62aefcd, the
parent of the change, with this function: five offsets, the input's echo, the screen's metadata)."""
GOAL_BUILD_MS = 5.0
ALL_LAYERS = ",".join(LAYERS)
DISTINCT_LAYERS = "text,cursor,fgColors,bgColors,styles"
"""Every layer but bold, italic and underline, which repeat what `styles` says."""
ENCODINGS = ("auto", "runs", "cells")
TERM_ENV = {"TERM": "xterm-256color", "COLORTERM": "truecolor", "LANG": "C.UTF-8"}

BROKEN_C = """\
#include <stdio.h>

struct point { int x; int y; };

static int area(const struct point *p) {
    return p->x * p->z;
}

int main(void) {
    struct point p = {1, 2};
    int n = "three";
    printf("%d %d\\n", area(&p), undefined_total);
    return missing_function(p, n);
}
"""


@dataclass(frozen=True)
class Program:
    name: str
    command: str
    """A shell command run in the work directory; the terminal keeps its screen after it ends."""


def programs(workdir: Path) -> list[Program]:
    """The five programs, with their input files created in `workdir`."""
    _make_git_repo(workdir / "repo")
    (workdir / "broken.c").write_text(BROKEN_C)
    shutil.copy(REPO / "lookout" / "terminal" / "screen" / "layers.py", workdir / "sample.py")
    monitor = "htop -d 600" if shutil.which("htop") else "top -d 600"
    return [
        Program("ls -la --color", "ls -la --color=always /usr/bin | head -n 38"),
        Program("git log --stat", "git -C repo --no-pager log --color=always --stat --decorate"),
        Program(monitor.split()[0], monitor),
        Program("vim sample.py", "vim -u DEFAULTS -i NONE sample.py"),
        Program("gcc error", "gcc -fdiagnostics-color=always -Wall -c broken.c"),
    ]


def _make_git_repo(path: Path) -> None:
    """A repository with 40 commits over a few files, a tag and a branch, at fixed dates."""
    path.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str, when: int = 0) -> None:
        stamp = f"{1_700_000_000 + when * 3600} +0000"
        dated = {**env, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, env=dated)

    git("init", "-q", "-b", "main")
    git("config", "user.name", "Bench Author")
    git("config", "user.email", "bench@example.com")
    for i in range(40):
        name = ("src/engine.py", "src/layers.py", "README.md", "tests/test_layers.py")[i % 4]
        file = path / name
        file.parent.mkdir(exist_ok=True)
        with file.open("a") as f:
            f.write("".join(f"line {i}.{j}: change number {i}\n" for j in range(1 + i % 5)))
        git("add", name)
        git("commit", "-q", "-m", f"Change {i}: update {name} for step {i}", when=i)
        if i == 20:
            git("tag", "v0.1.0")
    git("branch", "feature/layers")


# ----------------------------------------------------------------------------- tmux


def settle(read: Callable[[], Any], still_s: float = STILL_S, timeout_s: float = TIMEOUT_S) -> Any:
    """Poll `read` until its value has not changed for `still_s`; returns that value."""
    deadline = time.monotonic() + timeout_s
    value, since = read(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        current = read()
        if current != value:
            value, since = current, time.monotonic()
        elif time.monotonic() - since >= still_s:
            return value
    raise RuntimeError(f"the screen did not settle within {timeout_s} s")


def tmux_capture(program: Program, workdir: Path) -> tuple[str, str]:
    """The plain (`-p`) and escaped (`-e -p`) captures of `program` in a 120x40 tmux pane."""
    with TmuxServer("lookout-tokens", TERM_ENV) as tmux:
        tmux("new-session", "-d", "-s", "boot", "-x", str(COLS), "-y", str(ROWS))
        tmux("set", "-g", "default-terminal", TERM_ENV["TERM"])
        env_flags = [flag for key, value in TERM_ENV.items() for flag in ("-e", f"{key}={value}")]
        tmux("new-session", "-d", "-s", "prog", "-x", str(COLS), "-y", str(ROWS), "-c", str(workdir),
             *env_flags, f"{program.command}; exec sleep 3600")  # fmt: skip
        escaped = settle(lambda: tmux("capture-pane", "-e", "-p", "-t", "prog"))
        plain = tmux("capture-pane", "-p", "-t", "prog")
        return plain, escaped


# ----------------------------------------------------------------------------- lookout


@dataclass
class LookoutScreen:
    plain: str
    default_tokens: int
    distinct_tokens: int
    all_tokens: dict[str, int]
    raw: bytes
    example: dict[str, Any]


def _get(api: httpx.Client, url: str, **params: Any) -> httpx.Response:
    response = api.get(url, params=params)
    if response.is_error:
        raise RuntimeError(f"GET {url} {params}: {response.status_code} {response.text}")
    return response


def _tokens(response: httpx.Response) -> int:
    """The response's own `tokens`, checked against a count of its body."""
    body = response.json()
    if body["tokens"] != count_tokens(response.text):
        raise RuntimeError(f"tokens={body['tokens']} but the body is {count_tokens(response.text)} tokens")
    return int(body["tokens"])


def lookout_screen(api: httpx.Client, program: Program, workdir: Path) -> LookoutScreen:
    """`program` in a 120x40 lookout terminal: its screen's plain text and token counts, and its output."""
    spec = {"command": ["sh", "-c", f"{program.command}; exec sleep 3600"], "cwd": str(workdir),
            "cols": COLS, "rows": ROWS, "env": TERM_ENV}  # fmt: skip
    created = api.post("/v1/terminals", json=spec)
    if created.is_error:
        raise RuntimeError(f"POST /v1/terminals: {created.status_code} {created.text}")
    tid = created.json()["id"]
    try:
        url = f"/v1/terminals/{tid}/screen"
        settle(lambda: _get(api, url, layers=ALL_LAYERS, encoding="cells").json()["text"])
        default = _get(api, url)
        distinct = _get(api, url, layers=DISTINCT_LAYERS)
        every = {enc: _get(api, url, layers=ALL_LAYERS, encoding=enc) for enc in ENCODINGS}
        raw = b""
        while True:
            chunk = _get(api, f"/v1/terminals/{tid}/raw", offset=len(raw), limit=4 << 20).json()
            raw += base64.b64decode(chunk["data_b64"])
            if chunk["next_offset"] >= chunk["size"]:
                break
        return LookoutScreen(
            plain="\n".join(default.json()["text"]),
            default_tokens=_tokens(default),
            distinct_tokens=_tokens(distinct),
            all_tokens={enc: _tokens(response) for enc, response in every.items()},
            raw=raw,
            example=every["auto"].json(),
        )
    finally:
        api.delete(f"/v1/terminals/{tid}", params={"purge": "true"})


def build_ms(raw: bytes, repeat: int) -> dict[str, float]:
    """Median milliseconds to build every layer of the screen `raw` draws, per encoding (in process, on
    cells read from the engine beforehand: the layer builder alone)."""
    engine = create_engine("avt", COLS, ROWS, 1000)
    engine.feed(raw)
    cells = [engine.row_cells(row) for row in range(ROWS)]
    data = replace(screen_data(engine, title="bench"), row_cells=cells.__getitem__)
    out = {}
    for encoding in ENCODINGS:
        options = ViewOptions(layers=LAYERS, encoding=encoding)  # type: ignore[arg-type]
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            render(data, options)
            times.append((time.perf_counter() - start) * 1000)
        out[encoding] = statistics.median(times)
    return out


# ----------------------------------------------------------------------------- report


@dataclass
class Row:
    name: str
    plain: int
    tmux_plain: int
    default: int
    distinct: int
    all_tokens: dict[str, int]
    tmux_escaped: int
    build: dict[str, float]


COLUMNS = (
    ("plain", 6, lambda r: f"{r.plain}"),
    ("tmux -p", 7, lambda r: f"{r.tmux_plain}"),
    ("text,cursor", 11, lambda r: f"{r.default}"),
    ("+%", 6, lambda r: f"{_overhead(r):.1%}"),
    ("distinct", 8, lambda r: f"{r.distinct}"),
    ("all", 5, lambda r: f"{r.all_tokens['auto']}"),
    ("all runs", 8, lambda r: f"{r.all_tokens['runs']}"),
    ("all cells", 9, lambda r: f"{r.all_tokens['cells']}"),
    ("tmux -e", 7, lambda r: f"{r.tmux_escaped}"),
    ("all/tmux -e", 11, lambda r: f"{r.all_tokens['auto'] / r.tmux_escaped:.2f}"),
    ("build ms", 8, lambda r: f"{max(r.build.values()):.2f}"),
)


def report(rows: list[Row], example: dict[str, Any], act: tuple[int, str]) -> None:
    print(f"\nterminal_tokens: o200k_base tokens of five {COLS}x{ROWS} screens, lookout vs tmux, one run\n")
    print(f"{'program':<16}" + "".join(f" {name:>{width}}" for name, width, _ in COLUMNS))
    for r in rows:
        print(f"{r.name:<16}" + "".join(f" {cell(r):>{width}}" for _, width, cell in COLUMNS))
    print(f"\ndistinct = {DISTINCT_LAYERS} (bold, italic and underline repeat styles)")
    print(f"all = every layer ({ALL_LAYERS}), default encoding (auto), or runs or cells only")
    print("build ms = median time of the pure layer builder for every layer, slowest encoding")
    dense = rows[0]
    figures = {
        "bench": "terminal_tokens",
        "screens": {
            r.name: {"plain": r.plain, "tmux_plain": r.tmux_plain, "text_cursor": r.default, "distinct": r.distinct,
                     "all_auto": r.all_tokens["auto"], "all_runs": r.all_tokens["runs"],
                     "all_cells": r.all_tokens["cells"], "tmux_escaped": r.tmux_escaped,
                     "build_ms": {enc: round(ms, 3) for enc, ms in r.build.items()}}
            for r in rows
        },
        "text_cursor_overhead_dense": round(_overhead(dense), 4),
        "max_build_ms": round(max(max(r.build.values()) for r in rows), 3),
    }
    figures["goal_text_cursor_le_10pct"] = figures["text_cursor_overhead_dense"] <= GOAL_TEXT_OVERHEAD
    figures["goal_all_layers_lt_tmux_e"] = all(r.all_tokens["auto"] < r.tmux_escaped for r in rows)
    figures["goal_build_lt_5ms"] = figures["max_build_ms"] < GOAL_BUILD_MS
    figures["act_echo_hi_beside_rows"] = act[0]
    figures["act_echo_hi_beside_rows_before"] = ACT_TOKENS_BEFORE
    figures["goal_act_le_50"] = act[0] <= GOAL_ACT_TOKENS
    verdict = {True: "PASS", False: "MISS"}
    print(f"\ngoal: text,cursor <= plain + 10% on {dense.name} ..... "
          f"{verdict[figures['goal_text_cursor_le_10pct']]} (+{_overhead(dense):.1%})")
    worst = max(rows, key=lambda r: r.all_tokens["auto"] / r.tmux_escaped)
    print(f"goal: all layers < tmux -e on every screen ....... {verdict[figures['goal_all_layers_lt_tmux_e']]} "
          f"(worst {worst.name}: {worst.all_tokens['auto'] / worst.tmux_escaped:.2f}x)")
    print(f"goal: every layer built in < {GOAL_BUILD_MS:.0f} ms ............... "
          f"{verdict[figures['goal_build_lt_5ms']]} (max {figures['max_build_ms']} ms)")
    print(f"goal: act answer for `echo hi` <= {GOAL_ACT_TOKENS} tokens beside rows "
          f"{verdict[figures['goal_act_le_50']]} ({act[0]}; before: {ACT_TOKENS_BEFORE})")
    print(f"  {act[1]}")
    print(f"\nexample, all layers of '{dense.name}' (first 600 characters):")
    print(json.dumps(example, separators=(",", ":"))[:600])
    print(json.dumps(figures))


def _overhead(row: Row) -> float:
    return row.default / row.plain - 1


def act_overhead(api: httpx.Client, workdir: Path) -> tuple[int, str]:
    """The tokens of a default act answer for `echo hi` (until block_end) in bash beside its screen's rows,
    and the answer."""
    spec = {"command": ["bash"], "cwd": str(workdir), "cols": COLS, "rows": ROWS, "env": TERM_ENV}
    tid = api.post("/v1/terminals", json=spec).json()["id"]
    try:
        api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "timeout_ms": 10_000})
        body = {"input": {"text": "echo hi", "keys": ["Enter"]}, "until": {"block_end": True},
                "screen": {"compact": True}}  # fmt: skip
        answer = api.post(f"/v1/terminals/{tid}/act", json=body)
        rows = json.dumps(answer.json()["screen"]["text"], ensure_ascii=False, separators=(",", ":"))
        return count_tokens(answer.text) - count_tokens(rows), answer.text
    finally:
        api.delete(f"/v1/terminals/{tid}", params={"purge": "true"})


# ----------------------------------------------------------------------------- main


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200, help="builds timed per screen and encoding")
    args = parser.parse_args()
    for tool in ("tmux", "git", "gcc", "vim"):
        if shutil.which(tool) is None:
            parser.exit(2, f"{tool} is not installed (make bench installs it)\n")
    count_tokens("warm up")
    with ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="lookout-tokens-"))
        stack.callback(shutil.rmtree, workdir, True)
        daemon = Daemon(workdir, "avt")
        stack.callback(daemon.stop)
        stack.push(daemon.show_log_on_error)
        daemon.start()
        api = stack.enter_context(daemon.client())
        rows: list[Row] = []
        example: dict[str, Any] = {}
        for program in programs(workdir):
            _progress(f"{program.name} ...")
            tmux_plain, tmux_escaped = tmux_capture(program, workdir)
            screen = lookout_screen(api, program, workdir)
            example = example or screen.example
            rows.append(Row(
                program.name, count_tokens(screen.plain), count_tokens(tmux_plain), screen.default_tokens,
                screen.distinct_tokens, screen.all_tokens, count_tokens(tmux_escaped),
                build_ms(screen.raw, args.repeat),
            ))  # fmt: skip
        act = act_overhead(api, workdir)
    report(rows, example, act)


if __name__ == "__main__":
    main()
