"""Every example script in clients/scripts, run against a live daemon, so none of them rots."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, Daemon

SCRIPTS = REPO / "clients" / "scripts"
HELLO = re.compile(r"\Ahello from lookout\nLinux\n\Z")
TICKS = re.compile(r"\A" + "".join(rf"row {i - 1}: tick {i}\n" for i in range(1, 6)) + r"\Z")
EXPECTED = {
    "terminal-run.sh": HELLO,
    "terminal-run-httpie.sh": HELLO,
    "terminal-watch-deltas.sh": TICKS,
    "terminal-watch-deltas-httpie.sh": TICKS,
}
"""What each script prints on stdout when run without arguments."""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """PATH with the venv's bin (httpie's `http`), and an httpie config that never looks for updates."""
    config = tmp_path / "httpie"
    config.mkdir(exist_ok=True)
    (config / "config.json").write_text(json.dumps({"disable_update_warnings": True}))
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PATH": path, "HTTPIE_CONFIG_DIR": str(config), **extra}


def _run(script: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPTS / script, *args], env=env, capture_output=True, text=True, timeout=120)


def test_every_script_is_checked_and_executable() -> None:
    scripts = sorted(path.name for path in SCRIPTS.glob("*.sh"))
    assert scripts == sorted(EXPECTED)
    assert all(os.access(SCRIPTS / name, os.X_OK) for name in scripts)


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_script_runs_against_a_live_daemon(script: str, daemon: Daemon, tmp_path: Path) -> None:
    done = _run(script, _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token))
    assert done.returncode == 0, done.stderr
    assert EXPECTED[script].match(done.stdout), done.stdout
    with daemon.client() as api:
        assert api.get("/v1/terminals").json()["terminals"] == [], "the script purges its terminal"


@pytest.mark.parametrize("script", ["terminal-run.sh", "terminal-run-httpie.sh"])
def test_run_exits_with_the_commands_exit_code(script: str, daemon: Daemon, tmp_path: Path) -> None:
    done = _run(script, _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token), "ls /nonexistent-dir")
    assert done.returncode == 2
    assert "No such file or directory" in done.stdout and f"{script}: exit code 2" in done.stderr


@pytest.mark.parametrize("script", ["terminal-run.sh", "terminal-run-httpie.sh"])
def test_errors_are_one_clear_line(script: str, daemon: Daemon, tmp_path: Path) -> None:
    wrong_token = _run(script, _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN="wrong"))
    assert wrong_token.returncode == 1
    assert wrong_token.stderr.strip().endswith("missing or wrong token (Authorization: Bearer <token>)")
    no_token = _run(script, {**_env(tmp_path, LOOKOUT_URL=daemon.url), "LOOKOUT_TOKEN": ""})
    assert no_token.returncode == 1 and "LOOKOUT_TOKEN is not set" in no_token.stderr
    daemon.stop()
    no_daemon = _run(script, _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token))
    assert no_daemon.returncode == 1 and f"cannot reach lookout at {daemon.url}" in no_daemon.stderr
