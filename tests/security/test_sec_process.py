"""Issue 16, the terminal's processes: a program in a terminal cannot find the shell integration's nonce to
forge the end of its command; children start with default signal dispositions and an empty mask; WebSocket
input is validated like HTTP input. The daemon runs as a subprocess, with real bash and zsh."""
from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import sys
from pathlib import Path

import httpx
import pytest
import websockets

from tests.conftest import Daemon
from tests.support.polling import eventually

# Looks for the nonce wherever a program of the same user can read without touching the shell's memory:
# the shell's command line and environment (and every file they name), its open descriptors, its own
# environment, the daemon's command line and environment, and every file in the data dir. Then forges the
# end of its own command with whatever it found, and exits 42.
ATTACK = r"""
import os, re, sys
data_dir, daemon_pid = sys.argv[1], sys.argv[2]
found = set()
pattern = re.compile(rb"nonce[=\x00]+([0-9a-f]{32})")
def scan(path):
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return b""
    found.update(m.decode() for m in pattern.findall(text))
    return text
shell = str(os.getppid())
for proc in (shell, daemon_pid, "self"):
    for name in ("cmdline", "environ"):
        text = scan(f"/proc/{proc}/{name}")
        for word in re.split(rb"[\x00=]", text):
            if word.startswith(b"/"):
                scan(word)
for fd in os.listdir(f"/proc/{shell}/fd"):
    target = os.readlink(f"/proc/{shell}/fd/{fd}")
    if not target.startswith("/dev/"):
        try:
            fdr = os.open(f"/proc/{shell}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
            found.update(m.decode() for m in pattern.findall(os.read(fdr, 1 << 16)))
            os.close(fdr)
        except OSError:
            pass
for root, _, names in os.walk(data_dir):
    for name in names:
        scan(os.path.join(root, name))
print(f"candidates: {len(found)}")
for nonce in found:
    sys.stdout.write(f"\033]133;D;0;nonce={nonce}\a")
sys.stdout.flush()
sys.exit(42)
"""


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_program_cannot_find_the_nonce_to_forge_its_end(
    daemon: Daemon, api: httpx.Client, shell: str, tmp_path: Path
) -> None:
    assert shutil.which(shell), f"{shell} is not installed (`make test` installs it)"
    home = tmp_path / "home"
    home.mkdir()
    attack = tmp_path / "attack.py"
    attack.write_text(ATTACK)
    created = api.post("/v1/terminals", json={"command": [shell], "cwd": str(home), "env": {"HOME": str(home)}})
    tid = created.json()["id"]
    assert api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}}).json()["matched"]
    assert daemon.proc is not None
    line = f"{sys.executable} {attack} {daemon.data_dir} {daemon.proc.pid}\r"
    body = {"input": {"text": line}, "until": {"block_end": True}, "timeout_ms": 20_000}
    result = api.post(f"/v1/terminals/{tid}/act", json=body).json()
    assert result["ended"] == "block_end", result
    assert result["exit_code"] == 42, "a forged D mark ended the command"
    block = api.get(f"/v1/terminals/{tid}/blocks/1").json()
    assert "candidates: 0" in block["output"]["text"], block["output"]["text"]
    # The shell's marks are genuine all along: the next command has its own block.
    second = api.post(f"/v1/terminals/{tid}/act", json={**body, "input": {"text": "(exit 7)\r"}}).json()
    assert second["exit_code"] == 7 and api.get(f"/v1/terminals/{tid}").json()["forged_marks"] == 0


_LIBC_RESERVED = sum(1 << (sig - 1) for sig in range(32, signal.SIGRTMIN))
"""glibc's own signals (32 and 33, below SIGRTMIN): no program can set their disposition (sigaction refuses),
so they are outside what lookout can reset. One run in a dozen showed 32 ignored in a child: not yet explained."""


def _signal_fields(pid: int) -> dict[str, int]:
    """SigBlk and SigIgn of `pid`, less the C library's reserved signals."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
    return {name: int(fields[name], 16) & ~_LIBC_RESERVED for name in ("SigBlk", "SigIgn")}


# Starts the daemon as `nohup` would, and with SIGUSR2 and SIGWINCH blocked, SIGQUIT ignored as well.
UNFRIENDLY_START = [
    sys.executable, "-c",
    "import os, signal, sys\n"
    "for s in (signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1): signal.signal(s, signal.SIG_IGN)\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2, signal.SIGWINCH])\n"
    "os.execv(sys.argv[1], sys.argv[1:])",
]  # fmt: skip


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "\nState:\tZ" in f.read()
    except FileNotFoundError:
        return True


def test_children_start_with_default_signals_and_an_empty_mask(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data")
    daemon.start_command = UNFRIENDLY_START
    daemon.start()
    try:
        assert daemon.proc is not None
        assert _signal_fields(daemon.proc.pid)["SigIgn"] & (1 << (signal.SIGQUIT - 1)), "the set-up took"
        with daemon.client() as api:
            sleeper = api.post("/v1/terminals", json={"command": ["sleep", "100"]}).json()
            assert _signal_fields(sleeper["pid"]) == {"SigBlk": 0, "SigIgn": 0}
            loop = api.post("/v1/terminals", json={"command": ["bash", "-c", "while :; do sleep 0.2; done"]}).json()
        daemon.stop(signal.SIGKILL)
        assert not _gone(loop["pid"]) and not _gone(sleeper["pid"]), "they outlive the daemon, under their holders"
        daemon.end_terminals()  # the stop ladder starts with SIGHUP: with its default action, it ends both
        eventually(lambda: _gone(loop["pid"]) and _gone(sleeper["pid"]), what="both children to end with their terminals")
    finally:
        daemon.stop(signal.SIGKILL)
        for pid in (p for p in _started(daemon) if not _gone(p)):
            os.kill(pid, signal.SIGKILL)


def _started(daemon: Daemon) -> list[int]:
    """The pids of the daemon's terminals (from their meta files), to clean up after a failure."""
    return [json.loads(p.read_text())["pid"] for p in daemon.data_dir.glob("terminals/*/meta.json")]


BAD_MESSAGES = [
    ({"type": "input", "keys": "Enter"}, "keys"),
    ({"type": "input", "text": 5}, "text"),
    ({"type": "input", "text": "x", "bogus": 1}, "bogus"),
    ({"type": "input"}, "input needs"),
    ({"type": "resize", "cols": 1, "rows": 20}, "cols"),
]


async def test_websocket_input_is_validated_like_http_input(daemon: Daemon, api: httpx.Client) -> None:
    bash = ["bash", "--norc", "--noprofile"]
    tid = api.post("/v1/terminals", json={"command": bash, "cols": 80, "rows": 24}).json()["id"]
    assert api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}}).json()["matched"]
    url = f"ws://127.0.0.1:{daemon.port}/v1/terminals/{tid}/stream?mode=raw&token={daemon.token}"
    async with websockets.connect(url) as ws:
        assert json.loads(await ws.recv())["type"] == "hydrate"
        for message, field in BAD_MESSAGES:
            await ws.send(json.dumps(message))
            error = await _first_json(ws)
            assert error["type"] == "error" and error["error"]["code"] == "bad_input", (message, error)
            assert field in error["error"]["message"], (message, error)
        # The stream goes on, and nothing was typed.
        await ws.send(json.dumps({"type": "input", "text": "echo still-$((6*7))\r"}))
        seen = b""
        while b"still-42" not in seen:
            chunk = await asyncio.wait_for(ws.recv(), 10)
            seen += chunk if isinstance(chunk, bytes) else b""
    raw = base64.b64decode(api.get(f"/v1/terminals/{tid}/raw").json()["data_b64"])
    assert b"Enter" not in raw and api.get(f"/v1/terminals/{tid}").json()["cols"] == 80


async def _first_json(ws: websockets.ClientConnection) -> dict:
    while True:
        message = await asyncio.wait_for(ws.recv(), 10)
        if isinstance(message, str):
            return json.loads(message)
