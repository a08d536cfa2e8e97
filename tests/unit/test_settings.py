"""Settings come from LOOKOUT_<NAME> in the environment (any case), a value given to the constructor (a flag)
wins, and a bad value ends the `lookout` command with status 2 and a line that names it, not a traceback;
`lookout supervise` refuses what the daemon would refuse before it starts one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from lookout.config import Settings

REPO = Path(__file__).resolve().parents[2]


def test_the_environment_fills_what_the_constructor_leaves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOOKOUT_PORT", "9001")
    monkeypatch.setenv("lookout_screen_engine", "pyte")
    monkeypatch.setenv("LOOKOUT_ALLOWED_HOSTS", "lookout.example, ,box.local")
    monkeypatch.setenv("LOOKOUT_WS_COMPRESSION", "true")
    monkeypatch.setenv("LOOKOUT_DATA_DIR", str(tmp_path))
    settings = Settings(port=9002)
    assert settings.port == 9002  # given wins
    assert settings.screen_engine == "pyte" and settings.ws_compression is True
    assert settings.allowed_hosts == ("lookout.example", "box.local")
    assert settings.data_dir == tmp_path


def test_a_bad_value_from_the_environment_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKOUT_MAX_PAGES", "0")
    with pytest.raises(ValidationError, match="max_pages"):
        Settings()


@pytest.mark.parametrize(("env", "args", "said"), [
    ({"LOOKOUT_PORT": "eighty"}, ["serve"], "bad port (LOOKOUT_PORT): Input should be a valid integer"),
    ({}, ["serve", "--port", "70000"], "bad port (--port): Input should be less than or equal to 65535, got 70000"),
    ({"LOOKOUT_SCREEN_ENGINE": "vt100"}, ["ls"], "bad screen_engine (LOOKOUT_SCREEN_ENGINE): Input should be 'avt' or 'pyte'"),
    # what the daemon would refuse, `lookout supervise` refuses at once instead of starting it again every 10 s
    ({"LOOKOUT_TOKEN": "short"}, ["supervise"], "LOOKOUT_TOKEN (or --token) holds a token of 5 characters"),
    ({}, ["supervise", "--host", "0.0.0.0", "--port", "0"], "refusing to listen on 0.0.0.0 without a token"),
])  # fmt: skip
def test_the_command_names_a_bad_setting_and_exits_2(tmp_path: Path, env: dict[str, str], args: list[str],
                                                      said: str) -> None:  # fmt: skip
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("LOOKOUT_")}
    done = subprocess.run([sys.executable, "-m", "lookout", *args, "--data-dir", str(tmp_path / "data")], cwd=REPO,
                          env={**clean, **env}, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2, done
    assert said in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "data").exists()  # refused before anything was made
