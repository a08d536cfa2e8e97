"""Command blocks over HTTP: the app in process, a real bash with lookout's shell integration."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest


@pytest.fixture
def api(app_api: httpx.Client) -> httpx.Client:
    """Every test here runs against the app in process: none needs the daemon's process."""
    return app_api


def _bash(api: httpx.Client, home: Path, **extra: object) -> str:
    home.mkdir(exist_ok=True)
    body = {"command": ["bash"], "cwd": str(home), "env": {"HOME": str(home)}, "cols": 100, "rows": 30, **extra}
    r = api.post("/v1/terminals", json=body)
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    ready = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "timeout_ms": 10000})
    assert ready.json()["matched"], ready.text
    return tid


def _act(api: httpx.Client, tid: str, line: str) -> dict:
    r = api.post(
        f"/v1/terminals/{tid}/act",
        json={"input": {"text": line, "keys": ["Enter"]}, "until": {"block_end": True}, "timeout_ms": 10000, "detail": True},
    )
    assert r.status_code == 200, r.text
    return r.json()


def test_act_until_block_end_then_list_and_read_blocks(api: httpx.Client, tmp_path: Path) -> None:
    tid = _bash(api, tmp_path / "home")
    first = _act(api, tid, "ls /nonexistent-dir")
    assert first["wait"]["matched"] is True and first["wait"]["reason"] == "block_end"
    assert first["wait"]["block"] == {"n": 1, "exit_code": 2, "command": "ls /nonexistent-dir", "hand": "default"}
    second = _act(api, tid, "cd /tmp && for i in $(seq 300); do echo progress; done; seq 1000")
    assert second["wait"]["block"]["n"] == 2 and second["wait"]["block"]["exit_code"] == 0

    terminal = api.get(f"/v1/terminals/{tid}").json()
    assert terminal["shell_integration"] is True and terminal["cwd"] == "/tmp"
    assert terminal["block"] is None and terminal["block_count"] == 2 and terminal["forged_marks"] == 0

    listed = api.get(f"/v1/terminals/{tid}/blocks").json()
    assert [b["n"] for b in listed["blocks"]] == [1, 2] and listed["current"] is None
    assert listed["blocks"][0]["cwd"] == str(tmp_path / "home") and "output" not in listed["blocks"][0]
    assert [b["n"] for b in api.get(f"/v1/terminals/{tid}/blocks", params={"since": 1}).json()["blocks"]] == [2]
    assert [b["n"] for b in api.get(f"/v1/terminals/{tid}/blocks", params={"last": 1}).json()["blocks"]] == [2]

    one = api.get(f"/v1/terminals/{tid}/blocks/1").json()
    assert "No such file or directory" in one["output"]["text"] and one["output"]["truncated"] is False
    assert one["raw"]["end"] > one["raw"]["start"] and one["duration_ms"] >= 0
    two = api.get(f"/v1/terminals/{tid}/blocks/2", params={"max_tokens": 200}).json()["output"]
    lines = two["text"].split("\n")
    assert lines[0] == "progress  [repeated 300 times]" and lines[-1] == "1000"
    assert two["tokens"] <= 200 and two["truncated"] is True and two["lines"] == 1300
    assert any(line.startswith("[... ") and line.endswith(" lines omitted ...]") for line in lines)

    missing = api.get(f"/v1/terminals/{tid}/blocks/3")
    assert missing.status_code == 404 and missing.json()["error"]["code"]
    assert api.get(f"/v1/terminals/{tid}/blocks/1", params={"max_tokens": 0}).status_code == 422


def test_block_end_needs_shell_integration(api: httpx.Client, tmp_path: Path) -> None:
    tid = _bash(api, tmp_path / "home", shell_integration=False)
    assert api.get(f"/v1/terminals/{tid}").json()["shell_integration"] is False
    r = api.post(
        f"/v1/terminals/{tid}/act",
        json={"input": {"text": "echo should-not-run\r"}, "until": {"block_end": True}, "timeout_ms": 1000},
    )
    assert r.status_code == 400 and "shell integration" in r.json()["error"]["message"]
    r = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"block_end": True}, "timeout_ms": 1000})
    assert r.status_code == 400
    after = {"input": {"text": "echo after-$((6*7))\r"}, "until": {"regex": "^after-42"}}
    assert api.post(f"/v1/terminals/{tid}/act", json=after).json()["ended"] == "regex"  # input the act sent came first
    sent = api.post(
        f"/v1/terminals/{tid}/wait", json={"until": {"regex": "should-not-run"}, "since": 0, "timeout_ms": 500}
    )
    assert sent.json()["matched"] is False, "the rejected act sent no input"
    assert api.get(f"/v1/terminals/{tid}/blocks").json() == {"blocks": [], "current": None}
