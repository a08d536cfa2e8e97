"""Every example script in lookout/clients/scripts, run against a live daemon, so none of them rots."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.conftest import REPO, Daemon

SCRIPTS = REPO / "lookout" / "clients" / "scripts"
HELLO = re.compile(r"\Ahello from lookout\nLinux\n\Z")
TICKS = re.compile(r"\A" + "".join(rf"row {i - 1}: tick {i}\n" for i in range(1, 6)) + r"\Z")
EXPECTED = {
    "terminal-run.sh": HELLO,
    "terminal-run-httpie.sh": HELLO,
    "terminal-watch-deltas.sh": TICKS,
    "terminal-watch-deltas-httpie.sh": TICKS,
}
"""What each terminal script prints on stdout when run without arguments."""
DEVICE_SCRIPTS = ("device-screenshot.sh", "device-screenshot-httpie.sh")
PAGE_SCRIPTS = ("page-snapshot.sh", "page-snapshot-httpie.sh")
TIMELINE_SCRIPTS = ("timeline-history.sh", "timeline-history-httpie.sh")
PAGE = "data:text/html,<title>Hi</title><h1>Hello</h1><a href='%23more'>More</a><button>Go</button>"


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
    assert scripts == sorted([*EXPECTED, *DEVICE_SCRIPTS, *PAGE_SCRIPTS, *TIMELINE_SCRIPTS])
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


@pytest.fixture
def device_daemon(adb_daemon: Daemon, make_device: Any) -> tuple[Daemon, Any, str]:
    """A daemon that uses a real adb server with one fake 1080x2400 device showing a login button."""
    fake, serial = make_device(size=(1080, 2400))
    fake.set_ui(LOGIN_UI)
    return adb_daemon, fake, serial


LOGIN_UI = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" content-desc=""
 clickable="false" enabled="true" bounds="[0,0][1080,2400]">
<node index="0" text="Log in" resource-id="com.example:id/login" class="android.widget.Button" package="com.example"
 content-desc="" clickable="true" enabled="true" bounds="[90,1500][990,1650]" /></node></hierarchy>"""


def test_device_screenshot_saves_the_image_and_taps_by_text(
    device_daemon: tuple[Daemon, Any, str], tmp_path: Path
) -> None:
    daemon, fake, serial = device_daemon
    image = tmp_path / "shot.png"
    env = _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token)
    done = _run("device-screenshot.sh", env, serial, str(image), "log in")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{image}: 450x1000 of a 1080x2400\nscreen (scale 2.4), ~600 tokens, o_")
    assert done.stdout.endswith("tapped element 1 (Log in) at device pixel 540,1575\n")
    assert Image.open(image).size == (450, 1000)
    assert fake.inputs() == [["tap", "540", "1575"]]


def test_device_screenshot_httpie_lists_the_elements(device_daemon: tuple[Daemon, Any, str], tmp_path: Path) -> None:
    daemon, _, _serial = device_daemon
    image = tmp_path / "shot.png"
    done = _run("device-screenshot-httpie.sh", _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token),
                "", str(image))  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(rf"{image}: 450x1000, ~600 tokens, o_[0-9a-f]+", lines[0]), lines
    assert lines[1:] == ["[1] Button Log in at 225,656"]
    assert Image.open(image).size == (450, 1000)


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_page_snapshot_prints_the_snapshot(script: str, daemon: Daemon, tmp_path: Path) -> None:
    done = _run(script, _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token), PAGE, "500")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("# Page: Hi — data:text/html,") and re.fullmatch(r"# Tokens: \d+", lines[2])
    assert any(line.startswith('- button "Go" [ref=e') for line in lines)
    if script == "page-snapshot.sh":
        clicked = json.loads(lines[-1])
        assert clicked["clicked"].startswith("e") and clicked["url"].startswith("data:text/html,") and "effects" in clicked
    with daemon.client() as api:
        assert api.get("/v1/pages").json()["pages"] == [], "the script closes its page"


@pytest.mark.parametrize("script", TIMELINE_SCRIPTS)
def test_timeline_history_prints_the_messages(script: str, daemon: Daemon, tmp_path: Path) -> None:
    with daemon.client() as api:
        tid = api.post("/v1/terminals", json={"command": ["bash", "--norc"], "cols": 60, "rows": 8}).json()["id"]
        for n in range(4):
            body = {"input": {"text": f"echo step-$(({n}*11))", "keys": ["Enter"]}, "until": {"regex": f"step-{n * 11}"}}
            assert api.post(f"/v1/terminals/{tid}/act", json=body).status_code == 200
    env = _env(tmp_path, LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token)
    done = _run(script, env, "120")
    assert done.returncode == 0, done.stderr
    # the newest screen is kept, as a whole, a diff or a line: which fits 120 tokens depends on how the shell's
    # output happened to arrive, so only its presence is asserted here (tests/unit/test_timeline*.py: the levels)
    assert f"[user] [#8 terminal:{tid}]" in done.stdout, "the newest screen, at one level or another"
    if script == "timeline-history.sh":
        assert re.search(r"^# \d+ of 120 tokens, up to frame 8; elided: 1-", done.stdout, re.MULTILINE)
        whole = _run(script, env, "5000", f"terminal:{tid}").stdout
        assert f"[assistant] [#1 terminal:{tid}] typed `echo step-$((0*11))`" in whole and "\nstep-33\n" in whole
        refused = _run(script, env, "lots")
        assert refused.returncode == 1 and "budget must be a number" in refused.stderr
