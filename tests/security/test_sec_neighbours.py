"""Issue 46, hostile neighbours: a program in one terminal cannot change what a later terminal's shell runs
before it reads its nonce, nor forge the end of that terminal's command. The daemon runs as a subprocess,
with real bash."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import httpx

from tests.conftest import Daemon

# Run in terminal A: plants, in every file it can write under the data dir (and in the files the rc folder of
# an older lookout had there), a first line that copies the nonce of whichever shell reads it to `leak`.
PLANT = r"""
import os, sys
data_dir, leak = sys.argv[1], sys.argv[2]
payload = f"cat <&$LOOKOUT_NONCE_FD >> {leak}; echo read >> {leak}\n".encode()
planted = 0
for folder in ("shell/0000000000000000", "shell/latest"):
    os.makedirs(os.path.join(data_dir, folder), exist_ok=True)
    for name in ("bashrc", ".zshenv", ".zshrc"):
        with open(os.path.join(data_dir, folder, name), "wb") as f:
            f.write(payload)
for root, _, names in os.walk(data_dir):
    if "/terminals/" in root + "/" or "/timeline" in root:
        continue  # the records: rewriting them is another attack (tests/security/test_sec_files.py)
    for name in names:
        path = os.path.join(root, name)
        if os.path.isfile(path) and not os.path.islink(path) and name != "token":
            with open(path, "rb") as f:
                text = f.read()
            with open(path, "wb") as f:
                f.write(payload + text)
            planted += 1
print(f"planted: {planted}")
"""

# Run in terminal A while B's command runs: writes an end mark (exit 0) into B's terminal every 100 ms, with
# every nonce the plant leaked and a guess.
FORGE = r"""
import os, re, sys, time
pid, leak = sys.argv[1], sys.argv[2]
tty = os.readlink(f"/proc/{pid}/fd/0")
nonces = {"0" * 32}
if os.path.exists(leak):
    nonces.update(re.findall(r"[0-9a-f]{32}", open(leak).read()))
with open(tty, "wb", buffering=0) as f:
    for _ in range(30):
        for nonce in nonces:
            f.write(f"\033]133;D;0;nonce={nonce}\a".encode())
        time.sleep(0.1)
print(f"forged with {len(nonces)}")
"""


def _act(api: httpx.Client, tid: str, text: str) -> dict:
    body = {"input": {"text": text + "\r"}, "until": {"block_end": True}, "timeout_ms": 30_000}
    result = api.post(f"/v1/terminals/{tid}/act", json=body, timeout=40).json()
    assert result["ended"] == "block_end", result
    return result


def test_a_program_that_rewrites_the_data_dir_cannot_forge_a_later_terminals_end(
    daemon: Daemon, api: httpx.Client, tmp_path: Path
) -> None:
    assert shutil.which("bash")
    home = tmp_path / "home"
    home.mkdir()
    leak = tmp_path / "leak"
    (tmp_path / "plant.py").write_text(PLANT)
    (tmp_path / "forge.py").write_text(FORGE)
    spec = {"command": ["bash"], "cwd": str(home), "env": {"HOME": str(home)}}
    a = api.post("/v1/terminals", json=spec).json()["id"]
    planted = _act(api, a, f"{sys.executable} {tmp_path / 'plant.py'} {daemon.data_dir} {leak}")
    assert planted["exit_code"] == 0
    b = api.post("/v1/terminals", json=spec).json()
    assert api.post(f"/v1/terminals/{b['id']}/wait", json={"until": {"state_in": ["idle"]}}).json()["matched"]
    assert not leak.exists(), "a planted line ran in the later shell"
    assert _act(api, b["id"], "(exit 42)")["exit_code"] == 42

    api.post(f"/v1/terminals/{a}/input", json={"text": f"{sys.executable} {tmp_path / 'forge.py'} {b['pid']} {leak}\r"})
    forged = _act(api, b["id"], "sleep 3; (exit 42)")
    assert forged["exit_code"] == 42, "a forged end mark ended B's command"
    assert api.get(f"/v1/terminals/{b['id']}").json()["forged_marks"] > 0, "the forged marks are counted as forged"
