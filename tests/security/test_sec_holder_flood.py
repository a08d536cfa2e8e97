"""Issue 46, a program that floods its own holder with connections: the holder, at its descriptor limit, refuses
without spinning, keeps serving its daemon (an `act` on that terminal is answered), its log stays short, and
`lookout ls` does not call the running terminal orphaned. Real daemon, real holder, a real flood from inside
the terminal, the holder's limit lowered with prlimit(1)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import REPO, Daemon

FLOOD = r"""
import socket, sys, time
path, held = sys.argv[1], []
end = time.monotonic() + 8
while time.monotonic() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.05)
    try:
        s.connect(path)
        held.append(s)
    except OSError:
        s.close()
print(f"flood done: {len(held)} held", flush=True)
time.sleep(30)
"""

# In and out of the holder's limit: connect until nothing is taken for a second, let every connection go, wait,
# again.
FLAPPING = r"""
import socket, sys, time
path, spells = sys.argv[1], 0
end = time.monotonic() + 12
while time.monotonic() < end:
    held, last = [], time.monotonic()
    while time.monotonic() - last < 1.0:  # until nothing is taken for a second: the holder rests its socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(0.05)
        try:
            s.connect(path)
            held.append(s)
            last = time.monotonic()
        except OSError:
            s.close()
    spells += 1
    for s in held:
        s.close()
    time.sleep(1.5)
print(f"flapping done: {spells} spells", flush=True)
"""


def _flooded(api: httpx.Client, daemon: Daemon, tmp_path: Path, flood: str) -> str:
    """A terminal whose holder's descriptor limit is 40, and the flood `flood` started inside it: its id."""
    assert shutil.which("prlimit")
    bash = ["bash", "--norc", "--noprofile"]
    term = api.post("/v1/terminals", json={"command": bash, "shell_integration": False}).json()
    tid = term["id"]
    holder = int(Path(f"/proc/{term['pid']}/stat").read_text().rsplit(")", 1)[1].split()[1])
    subprocess.run(["prlimit", f"--pid={holder}", "--nofile=40:40"], check=True)
    (tmp_path / "flood.py").write_text(flood)
    sock = daemon.data_dir / "holders" / f"{tid}.sock"
    api.post(f"/v1/terminals/{tid}/input", json={"text": f"{sys.executable} {tmp_path / 'flood.py'} {sock} &\r"})
    return tid


def test_a_holder_flooded_to_its_descriptor_limit_still_serves_act(
    daemon: Daemon, api: httpx.Client, tmp_path: Path
) -> None:
    tid = _flooded(api, daemon, tmp_path, FLOOD)
    time.sleep(3)  # the flood is under way
    body = {"input": {"text": "echo ok-$((6*7))\r"}, "until": {"regex": "ok-42"}, "timeout_ms": 30_000}
    acted = api.post(f"/v1/terminals/{tid}/act", json=body).json()
    assert acted["ended"] == "regex", acted
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
    listed = subprocess.run([sys.executable, "-m", "lookout", "ls", "--data-dir", str(daemon.data_dir)], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    line = next(line for line in listed.stdout.splitlines() if tid in line)
    assert "orphaned" not in line and ("running" in line or "unresponsive" in line), listed.stdout
    body = {"until": {"regex": "flood done"}, "timeout_ms": 30_000}
    assert api.post(f"/v1/terminals/{tid}/wait", json=body).json()["matched"]
    log = (daemon.data_dir / "terminals" / tid / "holder.log").read_bytes()
    assert len(log) < 2000, log[-500:]
    again = {**body, "input": {"text": "echo again-$((6*7))\r"}, "until": {"regex": "again-42"}}
    assert api.post(f"/v1/terminals/{tid}/act", json=again).json()["ended"] == "regex"


def test_a_holder_kept_going_in_and_out_of_its_limit_logs_one_spell(
    daemon: Daemon, api: httpx.Client, tmp_path: Path
) -> None:
    tid = _flooded(api, daemon, tmp_path, FLAPPING)
    body = {"until": {"regex": r"flapping done: \d+ spells"}, "timeout_ms": 60_000}
    done = api.post(f"/v1/terminals/{tid}/wait", json=body).json()
    assert done["matched"], done
    said = re.search(r"flapping done: (\d+) spells", "\n".join(api.get(f"/v1/terminals/{tid}/screen").json()["text"]))
    assert said is not None
    spells = int(said[1])
    log = (daemon.data_dir / "terminals" / tid / "holder.log").read_text()
    print(f"{spells} spells at the limit: holder.log {len(log)} bytes, {len(log.splitlines())} lines")
    assert spells >= 3, "the flood took the holder to its limit again and again"
    assert log.count("cannot take connections") == 1, log
    assert len(log) < 1000, log
    acted = {"input": {"text": "echo ok-$((6*7))\r"}, "until": {"regex": "ok-42"}, "timeout_ms": 30_000}
    assert api.post(f"/v1/terminals/{tid}/act", json=acted).json()["ended"] == "regex"
