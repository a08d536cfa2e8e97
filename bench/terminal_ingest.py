"""Terminal ingest benchmark: how fast lookout takes a flood of output off a PTY, against tmux and the limit.

`cat` of a generated file (log- and build-output-like lines of 20-150 characters, some with SGR colours,
seeded so every run sees the same bytes) is pushed through a 120x40 PTY three ways:

- bare:    a Python reader that only counts bytes (os.read of 64 KiB until EOF): the limit on this machine;
- tmux:    the peer, on a private server with no config, timed from `new-session` until a `pane-died` hook
           has signalled `wait-for`, i.e. until tmux has read the whole output and seen its end;
- lookout: one `lookout serve` subprocess (temp data dir, default engine unless --engine), timed from
           `POST /v1/terminals` until `POST /v1/terminals/{id}/wait {"until": {"exit": true}}` returns,
           end to end with the journal and the screen model live;
- lookout, polled: the same flood while a thread polls `GET /v1/terminals/{other}/screen` of a quiet
           second terminal back to back and records the latencies (the client shares the two cores).

The four are interleaved (bare, tmux, lookout, lookout polled, bare, ...) `--runs` times and the median of
each is reported (MB = 2**20 bytes), with lookout's ratio to tmux and to the limit, the p50/p99 screen
latency of the other terminal (each the median over the runs of that run's percentile), and the goals
(lookout at least as fast as tmux; that p99 under 50 ms). The last line of the output is one JSON object
with the same figures.

Run it from the repository root after `make test` (or just `make bench`, which runs it):

    .venv/bin/python bench/terminal_ingest.py [--size-mb 50] [--runs 3] [--engine avt|pyte]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
from ptyprocess import PtyProcess

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tmux_server import TmuxServer

from lookout.daemon.lock import lock_holder

REPO = Path(__file__).resolve().parent.parent
MB = 1 << 20
COLS, ROWS = 120, 40
SEED = 20240501
READ_BYTES = 65536
WAIT_TIMEOUT_MS = 120_000
TOKEN = "bench-token-not-secret"
GOAL_P99_MS = 50.0

WORDS = (
    "request", "handled", "worker", "cache", "miss", "hit", "queue", "flush", "retry", "connection",
    "timeout", "upstream", "object", "linking", "module", "compile", "artifact", "checksum", "verified",
    "session", "token", "refresh", "batch", "index", "shard", "replica", "commit", "snapshot", "latency",
    "bytes=4096", "payload", "config", "loaded", "from", "to", "in", "12ms", "ok", "done", "skipped",
    "user_id=8812", "/var/lib/app/data", "src/core/engine.rs", "GET", "POST", "/api/v2/items", "200",
    "404", "503", "elapsed=0.031s", "attempt=2", "pool=default", "-O2", "-Wall", "[done]",
)  # fmt: skip
EMOJI_WORDS = (
    "\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u2764\ufe0f", "\U0001F1E9\U0001F1EA", "\U0001F44D\U0001F3FD",
    "cafe\u0301", "re\u0301sume\u0301", "\u2705", "\u2b50\ufe0f", "1\ufe0f\u20e3", "\U0001F680",
)  # fmt: skip
"""With --emoji, a third of the words: ZWJ sequences, variation selectors, flags, skin tones, combining marks."""
LEVELS = (("DEBUG", "36"), ("INFO", "32"), ("INFO", "32"), ("INFO", "32"), ("WARN", "33"), ("ERROR", "1;31"))


# ----------------------------------------------------------------------------- input


def _sgr(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def _prefix(rng: random.Random) -> tuple[str, int]:
    """The start of one line (log record, build step, compiler diagnostic, test result or nothing) and
    its visible width."""
    colour = rng.random() < 0.35
    kind = rng.randrange(5)
    if kind == 0:
        level, code = rng.choice(LEVELS)
        ts = f"2024-05-01T12:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z "
        tag = f" [worker-{rng.randrange(16)}] "
        return ts + _sgr(f"{level:<5}", code, colour) + tag, len(ts) + 5 + len(tag)
    if kind == 1:
        step = f"[{rng.randrange(101):3d}%] "
        return _sgr(step, "32", colour) + "Building C object ", len(step) + 18
    if kind == 2:
        loc = f"src/{rng.choice(WORDS[:20])}.c:{rng.randrange(1, 3000)}:{rng.randrange(1, 80)}: "
        what, code = rng.choice((("warning: ", "1;35"), ("error: ", "1;31"), ("note: ", "1;36")))
        return _sgr(loc, "1", colour) + _sgr(what, code, colour), len(loc) + len(what)
    if kind == 3:
        mark, code = ("\u2713 ", "32") if rng.random() < 0.9 else ("\u2717 ", "31")
        return _sgr(mark, code, colour) + "tests/", 8
    return "", 0


def _line(rng: random.Random, emoji: bool) -> str:
    prefix, width = _prefix(rng)
    target = rng.randint(max(20, width + 4), 150)
    words = " ".join(rng.choices(WORDS + EMOJI_WORDS * 3 if emoji else WORDS, k=30))
    return prefix + words[: target - width] + "\n"


def generate_input(path: Path, size: int, emoji: bool = False) -> int:
    """Write exactly `size` bytes of log/build-like lines to `path`; returns how many lines end in "\\n"."""
    rng = random.Random(SEED)
    written = lines = 0
    with path.open("wb") as f:
        while written < size:
            data = _line(rng, emoji).encode()
            if written + len(data) > size:  # the last line: plain filler of the bytes that are left
                data = ("x" * (size - written - 1) + "\n").encode()[: size - written]
            f.write(data)
            written += len(data)
            lines += data.endswith(b"\n")
    return lines


# ----------------------------------------------------------------------------- bare PTY reader


def run_bare(path: Path, expected: int) -> float:
    """Seconds for a bare Python reader to take `cat path` off a fresh PTY."""
    start = time.perf_counter()
    proc = PtyProcess.spawn(["cat", str(path)], dimensions=(ROWS, COLS))
    try:
        total = 0
        while True:
            try:
                data = os.read(proc.fd, READ_BYTES)
            except OSError:  # EIO: cat has exited and its output is drained
                break
            if not data:
                break
            total += len(data)
        elapsed = time.perf_counter() - start
        if proc.wait() != 0 or total != expected:
            raise RuntimeError(f"bare: cat exited {proc.exitstatus}, read {total} of {expected} bytes")
        return elapsed
    finally:
        proc.close(force=True)


# ----------------------------------------------------------------------------- tmux


def run_tmux(path: Path) -> float:
    """Seconds for tmux to take `cat path` off a 120x40 pane, on a private server with a quiet session."""
    channel = f"done-{os.getpid()}"
    with TmuxServer("lookout-bench") as tmux:
        tmux("new-session", "-d", "-s", "quiet", "-x", str(COLS), "-y", str(ROWS), "cat")
        tmux("set", "-g", "default-size", f"{COLS}x{ROWS}")
        tmux("set", "-g", "remain-on-exit", "on")
        tmux("set-hook", "-g", "pane-died", f"wait-for -S {channel}")
        start = time.perf_counter()
        size_flags = ("-x", str(COLS), "-y", str(ROWS))
        tmux("new-session", "-d", "-s", "flood", *size_flags, f"cat {shlex.quote(str(path))}")
        tmux("wait-for", channel)
        elapsed = time.perf_counter() - start
        pane = tmux("display", "-p", "-t", "flood", "#{pane_dead_status} #{pane_width}x#{pane_height}")
        status, size = pane.split()
        if status != "0" or size != f"{COLS}x{ROWS}":
            raise RuntimeError(f"tmux: cat exited {status} in a {size} pane (wanted 0 and {COLS}x{ROWS})")
        return elapsed


# ----------------------------------------------------------------------------- lookout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Daemon:
    """`python -m lookout serve` on a free port with its own data dir; its output goes to `log`."""

    workdir: Path
    engine: str = "avt"
    env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=_free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / "daemon.log"

    def start(self) -> None:
        data_dir = self.workdir / "data"
        cmd = [sys.executable, "-m", "lookout", "serve", "--port", str(self.port), "--data-dir", str(data_dir)]
        env = {**os.environ, "LOOKOUT_TOKEN": TOKEN, "LOOKOUT_SCREEN_ENGINE": self.engine, **self.env}
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60  # a loaded machine can take that long
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"daemon did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        """Stop the daemon, then end its terminals (they outlive it, each under its holder; also when the
        daemon had died)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        successor = lock_holder(self.workdir / "data")  # one that `lookout restart` started in its place
        if successor is not None:
            os.kill(successor, signal.SIGTERM)
            deadline = time.monotonic() + 15
            while Path(f"/proc/{successor}").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(self.workdir / "data")], cwd=REPO,
                       capture_output=True, timeout=120, check=False)  # fmt: skip

    def show_log_on_error(self, exc_type: type[BaseException] | None, *_: object) -> None:
        """An ExitStack exit callback: on failure, the end of the daemon's output goes to stderr."""
        if exc_type is not None and issubclass(exc_type, Exception) and self.log.exists():
            tail = self.log.read_text(errors="replace").splitlines()[-40:]
            _progress("daemon log (last lines):\n" + "\n".join(tail))

    def client(self, timeout: float = 30) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=timeout)


def _call(client: httpx.Client, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
    response = client.request(method, url, **kwargs)
    if response.is_error:
        raise RuntimeError(f"{method} {url}: {response.status_code} {response.text}")
    body: dict[str, Any] = response.json()
    return body


def create_terminal(client: httpx.Client, command: list[str]) -> str:
    created = _call(client, "POST", "/v1/terminals", json={"command": command, "cols": COLS, "rows": ROWS})
    return str(created["id"])


def wait_for(client: httpx.Client, terminal_id: str, until: dict[str, Any]) -> dict[str, Any]:
    """POST /wait until it matches, re-asking after each timeout; raises if the terminal exits unmatched."""
    while True:
        body = {"until": until, "since": 0, "timeout_ms": WAIT_TIMEOUT_MS}
        result = _call(client, "POST", f"/v1/terminals/{terminal_id}/wait", json=body)
        if result["matched"]:
            return result
        if result["reason"] != "timeout":
            raise RuntimeError(f"wait {until} on {terminal_id}: {result}")


@contextmanager
def screen_poller(client: httpx.Client, terminal_id: str) -> Iterator[list[float]]:
    """Polls GET /screen of `terminal_id` back to back in a thread; yields the latencies (ms) it records."""
    latencies: list[float] = []
    errors: list[httpx.HTTPError] = []
    stop = threading.Event()

    def loop() -> None:
        try:
            while not stop.is_set():
                start = time.perf_counter()
                client.get(f"/v1/terminals/{terminal_id}/screen").raise_for_status()
                latencies.append((time.perf_counter() - start) * 1000)
        except httpx.HTTPError as exc:  # reported in the main thread
            errors.append(exc)

    thread = threading.Thread(target=loop, name="screen-poller", daemon=True)
    thread.start()
    try:
        yield latencies
    finally:
        stop.set()
        thread.join()
    if errors:
        raise RuntimeError(f"screen poller failed: {errors[0]!r}")


@dataclass(frozen=True)
class LookoutRun:
    seconds: float
    latencies_ms: list[float]


def run_lookout(api: httpx.Client, path: Path, expected: int, poll: tuple[httpx.Client, str] | None) -> LookoutRun:
    """One flood through lookout, timed from POST /v1/terminals until the exit wait returns; with `poll`
    (a client and a terminal id), that terminal's screen is polled meanwhile."""
    with ExitStack() as stack:
        latencies = stack.enter_context(screen_poller(*poll)) if poll else []
        start = time.perf_counter()
        terminal_id = create_terminal(api, ["cat", str(path)])
        result = wait_for(api, terminal_id, {"exit": True})
        elapsed = time.perf_counter() - start
    info = _call(api, "GET", f"/v1/terminals/{terminal_id}")
    _call(api, "DELETE", f"/v1/terminals/{terminal_id}", params={"purge": "true"})
    if result["exit_code"] != 0 or info["raw_size"] != expected:
        raise RuntimeError(
            f"lookout: cat exited {result['exit_code']}, journal has {info['raw_size']} of {expected} bytes"
        )
    return LookoutRun(elapsed, list(latencies))


# ----------------------------------------------------------------------------- report


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def timed(fn: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    """Milliseconds of each of `runs` calls, and the last call's result."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return times, result


@dataclass
class Results:
    size: int
    engine: str
    emoji: bool
    bare_s: list[float] = field(default_factory=list)
    tmux_s: list[float] = field(default_factory=list)
    lookout: list[LookoutRun] = field(default_factory=list)
    polled: list[LookoutRun] = field(default_factory=list)

    def mb_s(self, seconds: list[float]) -> list[float]:
        return [self.size / MB / s for s in seconds]

    def figures(self) -> dict[str, Any]:
        bare = statistics.median(self.mb_s(self.bare_s))
        tmux = statistics.median(self.mb_s(self.tmux_s))
        look = statistics.median(self.mb_s([r.seconds for r in self.lookout]))
        polled = statistics.median(self.mb_s([r.seconds for r in self.polled]))
        p50 = statistics.median(percentile(r.latencies_ms, 50) for r in self.polled)
        p99 = statistics.median(percentile(r.latencies_ms, 99) for r in self.polled)
        return {
            "bench": "terminal_ingest",
            "size_mb": round(self.size / MB, 2),
            "emoji": self.emoji,
            "runs": len(self.lookout),
            "bare_mb_s": round(bare, 1),
            "tmux_mb_s": round(tmux, 1),
            "lookout_mb_s": round(look, 1),
            "lookout_polled_mb_s": round(polled, 1),
            "lookout_vs_tmux": round(look / tmux, 3),
            "lookout_vs_bare": round(look / bare, 3),
            "screen_p50_ms": round(p50, 2),
            "screen_p99_ms": round(p99, 2),
            "screen_samples": sum(len(r.latencies_ms) for r in self.polled),
            "engine": self.engine,
            "goal_lookout_ge_tmux": look >= tmux,
            "goal_screen_p99_lt_50ms": p99 < GOAL_P99_MS,
        }


def report(results: Results, tmux_version: str) -> None:
    fig = results.figures()
    rows = (
        ("bare PTY reader", results.bare_s, fig["bare_mb_s"], "(limit)"),
        (tmux_version, results.tmux_s, fig["tmux_mb_s"], ""),
        (f"lookout ({results.engine})", [r.seconds for r in results.lookout], fig["lookout_mb_s"], ""),
        ("lookout, polled", [r.seconds for r in results.polled], fig["lookout_polled_mb_s"], "(other screen polled)"),
    )
    print(f"\nterminal_ingest: {fig['size_mb']} MB through a {COLS}x{ROWS} PTY, median of {fig['runs']} runs\n")
    print(f"{'method':<20} {'MB/s':>8}  {'vs bare':>7}  runs (MB/s)")
    for name, seconds, median, note in rows:
        runs = " ".join(f"{v:7.1f}" for v in results.mb_s(seconds))
        print(f"{name:<20} {median:8.1f}  {median / fig['bare_mb_s']:7.2f}  {runs} {note}".rstrip())
    print(f"\nlookout vs tmux: {fig['lookout_vs_tmux']:.2f}x   lookout vs bare: {fig['lookout_vs_bare']:.2f}x")
    per_run = ", ".join(
        f"{percentile(r.latencies_ms, 50):.1f}/{percentile(r.latencies_ms, 99):.1f} (n={len(r.latencies_ms)})"
        for r in results.polled
    )
    print(
        f"GET /screen of the other terminal during the flood: p50 {fig['screen_p50_ms']} ms, "
        f"p99 {fig['screen_p99_ms']} ms   [per run p50/p99 ms: {per_run}]"
    )
    verdict = {True: "PASS", False: "MISS"}
    print(f"\ngoal: lookout >= tmux ........ {verdict[fig['goal_lookout_ge_tmux']]} ({fig['lookout_vs_tmux']:.2f}x)")
    p99_verdict = verdict[fig["goal_screen_p99_lt_50ms"]]
    print(f"goal: screen p99 < {GOAL_P99_MS:.0f} ms ..... {p99_verdict} ({fig['screen_p99_ms']} ms)")
    print(json.dumps(fig))


# ----------------------------------------------------------------------------- main


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _timed(label: str, fn: Callable[[], float]) -> float:
    seconds = fn()
    _progress(f"  {label:<8} {seconds:6.2f} s")
    return seconds


def bench(args: argparse.Namespace, stack: ExitStack) -> Results:
    workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-"))
    stack.callback(shutil.rmtree, workdir, True)
    size = int(args.size_mb * MB)
    path = workdir / "flood.txt"
    _progress(f"generating {size} bytes of input ...")
    expected = size + generate_input(path, size, args.emoji)  # the PTY turns each "\n" into "\r\n"

    daemon = Daemon(workdir, args.engine)
    stack.callback(daemon.stop)
    stack.push(daemon.show_log_on_error)
    daemon.start()
    api = stack.enter_context(daemon.client(timeout=WAIT_TIMEOUT_MS / 1000 + 30))
    poll_client = stack.enter_context(daemon.client())
    other_id = create_terminal(api, ["bash", "--norc", "--noprofile"])
    wait_for(api, other_id, {"stable_ms": 300})

    results = Results(size, args.engine, args.emoji)
    for run in range(1, args.runs + 1):
        _progress(f"run {run}/{args.runs}")
        results.bare_s.append(_timed("bare", lambda: run_bare(path, expected)))
        results.tmux_s.append(_timed("tmux", lambda: run_tmux(path)))
        results.lookout.append(plain := run_lookout(api, path, expected, None))
        _progress(f"  {'lookout':<8} {plain.seconds:6.2f} s")
        results.polled.append(polled := run_lookout(api, path, expected, (poll_client, other_id)))
        _progress(f"  {'polled':<8} {polled.seconds:6.2f} s  ({len(polled.latencies_ms)} screen polls)")
    return results


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=50, help="input size in MB of 2**20 bytes (default 50)")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each method (default 3)")
    parser.add_argument("--engine", choices=["avt", "pyte"], default="avt", help="lookout's screen engine")
    parser.add_argument("--emoji", action="store_true", help="emoji and accents in a third of the words")
    args = parser.parse_args()
    if args.runs < 1 or args.size_mb <= 0:
        parser.error("--runs and --size-mb must be positive")
    if shutil.which("tmux") is None:
        parser.exit(2, "tmux is not installed (make bench installs it)\n")
    signal.signal(signal.SIGTERM, _raise_exit)
    tmux_version = subprocess.run(["tmux", "-V"], check=True, capture_output=True, text=True).stdout.strip()
    with ExitStack() as stack:
        results = bench(args, stack)
    report(results, tmux_version)


if __name__ == "__main__":
    main()
