"""The terminal API over HTTP with real shells on real PTYs: the app in process (`app_api`) where no process
matters, the daemon as a subprocess (`daemon`, `api`) for signals, restarts, its environment and its loop."""
from __future__ import annotations

import base64
import os
import signal
import threading
from pathlib import Path

import httpx
import orjson
from starlette.testclient import TestClient

from lookout.core.tokens import count_tokens
from tests.conftest import Daemon


def _raw(api: httpx.Client, tid: str) -> bytes:
    out = b""
    offset = 0
    while True:
        r = api.get(f"/v1/terminals/{tid}/raw", params={"offset": offset, "limit": 4 << 20})
        assert r.status_code == 200, r.text
        body = r.json()
        out += base64.b64decode(body["data_b64"])
        if body["next_offset"] >= body["size"]:
            return out
        offset = body["next_offset"]


def _shell(api: httpx.Client, **extra: object) -> str:
    r = api.post("/v1/terminals", json={"command": ["bash", "--norc", "--noprofile"], "cols": 100, "rows": 30, **extra})
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    prompt = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "timeout_ms": 10000})
    assert prompt.json()["matched"], prompt.text
    return tid


def _wait_exit(api: httpx.Client, tid: str, timeout_ms: int = 20000) -> dict:
    r = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"exit": True}, "since": 0, "timeout_ms": timeout_ms})
    assert r.status_code == 200, r.text
    return r.json()


def test_health_needs_no_token(daemon: Daemon) -> None:
    r = httpx.get(f"{daemon.url}/healthz")
    assert r.status_code == 200 and r.json()["ok"] is True


def test_act_echo_until_regex_then_read_raw(app_api: httpx.Client) -> None:
    tid = _shell(app_api)
    r = app_api.post(
        f"/v1/terminals/{tid}/act",
        json={"input": {"text": "echo hi-$((40+2))", "keys": ["Enter"]}, "until": {"regex": r"^hi-42\s*$"}, "timeout_ms": 10000, "detail": True},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["wait"]["matched"] is True and body["wait"]["reason"] == "regex"
    assert body["wait"]["match"]["text"].startswith("hi-42")
    assert any(row.strip() == "hi-42" for row in body["screen"]["text"])
    assert body["screen"]["terminal"] == {"width": 100, "height": 30}
    raw = _raw(app_api, tid)
    assert b"hi-42\r\n" in raw
    assert body["wait"]["cursor"] <= len(raw)
    # The cursor points just past the match: what follows it is the next prompt, not the match again.
    again = app_api.post(
        f"/v1/terminals/{tid}/wait",
        json={"until": {"regex": r"^hi-42"}, "since": body["wait"]["cursor"], "timeout_ms": 300},
    ).json()
    assert again["matched"] is False and again["reason"] == "timeout"


def test_resize_changes_pty_and_screen(app_api: httpx.Client) -> None:
    tid = _shell(app_api)
    r = app_api.post(f"/v1/terminals/{tid}/resize", json={"cols": 77, "rows": 21})
    assert r.status_code == 200 and (r.json()["cols"], r.json()["rows"]) == (77, 21)
    act = app_api.post(
        f"/v1/terminals/{tid}/act",
        json={"input": {"text": "stty size\r"}, "until": {"regex": r"^\d+ \d+"}, "timeout_ms": 10000, "detail": True},
    ).json()
    assert act["wait"]["match"]["text"] == "21 77"
    assert act["screen"]["terminal"] == {"width": 77, "height": 21}
    assert len(act["screen"]["text"]) == 21


def test_ctrl_c_interrupts_sleep(app_api: httpx.Client) -> None:
    tid = _shell(app_api)
    running = app_api.post(
        f"/v1/terminals/{tid}/act",
        json={"input": {"text": "sleep 100\r"}, "until": {"state_in": ["running"]}, "timeout_ms": 60_000, "detail": True},
    ).json()
    assert running["wait"]["matched"] and running["wait"]["state"] == "running"
    back = app_api.post(
        f"/v1/terminals/{tid}/act",
        json={"input": {"keys": ["C-c"]}, "until": {"state_in": ["idle"]}, "timeout_ms": 60_000, "detail": True},
    ).json()
    assert back["wait"]["matched"], back
    status = app_api.post(
        f"/v1/terminals/{tid}/act", json={"input": {"text": "echo status=$?\r"}, "until": {"regex": r"^status=\d+"}, "detail": True}
    ).json()
    assert status["wait"]["match"]["text"] == "status=130"
    assert app_api.get(f"/v1/terminals/{tid}").json()["status"] == "running"


def test_program_that_exits_at_once_loses_no_output(app_api: httpx.Client) -> None:
    r = app_api.post("/v1/terminals", json={"command": ["seq", "1", "30000"]})
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    done = _wait_exit(app_api, tid)
    assert done["matched"] and done["reason"] == "exit" and done["exit_code"] == 0
    expected = "".join(f"{i}\r\n" for i in range(1, 30001)).encode()
    assert _raw(app_api, tid) == expected
    info = app_api.get(f"/v1/terminals/{tid}").json()
    assert info["status"] == "exited" and info["exit_code"] == 0 and info["state"] == "exited"
    screen = app_api.get(f"/v1/terminals/{tid}/screen").json()
    assert screen["text"][screen["cursor"]["top"] - 1] == "30000"


def test_string_command_runs_in_shell_and_reports_exit_code(app_api: httpx.Client) -> None:
    tid = app_api.post("/v1/terminals", json={"command": "echo one; exit 3"}).json()["id"]
    done = _wait_exit(app_api, tid)
    assert done["exit_code"] == 3
    assert app_api.get(f"/v1/terminals/{tid}/screen").json()["text"][0] == "one"


def test_flood_of_100_mb_while_another_session_stays_responsive(api: httpx.Client, daemon: Daemon) -> None:
    quiet = _shell(api)
    api.post(f"/v1/terminals/{quiet}/act", json={"input": {"text": "echo quiet-one\r"}, "until": {"regex": "^quiet-one"}})
    line = "0123456789" * 7 + "abcdefgh"  # 78 characters, 80 bytes per line on the PTY with CR LF
    count = 100 * 1024 * 1024 // 80
    flood = api.post("/v1/terminals", json={"command": f"yes {line} | head -n {count}"}).json()["id"]

    answers: list[int] = []
    stop = threading.Event()

    def poll() -> None:
        with daemon.client() as c:
            while not stop.is_set():
                r = c.get(f"/v1/terminals/{quiet}/screen")
                assert r.status_code == 200
                assert any("quiet-one" in row for row in r.json()["text"])
                answers.append(r.status_code)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        done = _wait_exit(api, flood, timeout_ms=240_000)
    finally:
        stop.set()
        poller.join()
    assert done["matched"] and done["exit_code"] == 0
    info = api.get(f"/v1/terminals/{flood}").json()
    assert info["raw_size"] == count * 80
    assert len(answers) >= 3  # the other session kept answering while the flood ran
    tail = api.get(f"/v1/terminals/{flood}/raw", params={"offset": count * 80 - 160}).json()
    assert base64.b64decode(tail["data_b64"]) == (line + "\r\n").encode() * 2


def test_restart_adopts_running_terminals_and_serves_ended_ones(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid = _shell(api)
        api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo persisted-marker\r"}, "until": {"regex": "^persisted-marker"}})
        pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
        done = api.post("/v1/terminals", json={"command": ["echo", "finished-before"]}).json()["id"]
        _wait_exit(api, done)
    assert d.stop(signal.SIGKILL) == -signal.SIGKILL  # a crash, not a clean stop
    d2 = Daemon(tmp_path / "data").start()
    try:
        with d2.client() as api:
            listed = {t["id"]: t for t in api.get("/v1/terminals").json()["terminals"]}
            assert listed[tid]["status"] == "running" and listed[tid]["pid"] == pid
            assert listed[done]["status"] == "exited" and listed[done]["exit_code"] == 0
            screen = api.get(f"/v1/terminals/{tid}/screen").json()
            assert any(row == "persisted-marker" for row in screen["text"])
            assert api.get(f"/v1/terminals/{done}/screen").json()["text"][0] == "finished-before"
            r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo again-$((40+2))\r"}, "until": {"regex": "^again-42"}})
            assert r.status_code == 200 and r.json()["ended"] == "regex", r.text
            r = api.post(f"/v1/terminals/{done}/input", json={"text": "x"})
            assert r.status_code == 409 and r.json()["error"]["code"] == "conflict"
    finally:
        d2.stop()


def test_a_clean_stop_leaves_the_programs_running_for_the_next_daemon(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid = _shell(api)
        pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
    assert d.stop(signal.SIGTERM) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after its shutdown
    assert "Application shutdown complete" in d.log.read_text()
    assert Path(f"/proc/{pid}").exists(), "the shell outlives the daemon"
    d2 = Daemon(tmp_path / "data").start()
    try:
        with d2.client() as api:
            info = api.get(f"/v1/terminals/{tid}").json()
            assert info["status"] == "running" and info["pid"] == pid
            assert api.delete(f"/v1/terminals/{tid}").status_code == 200
            assert api.get(f"/v1/terminals/{tid}").json()["status"] == "exited"
            assert not Path(f"/proc/{pid}").exists()
    finally:
        d2.stop()


def test_delete_and_purge(app_api: TestClient) -> None:
    data_dir = app_api.app.state.settings.data_dir
    tid = _shell(app_api)
    pid = app_api.get(f"/v1/terminals/{tid}").json()["pid"]
    r = app_api.delete(f"/v1/terminals/{tid}")
    assert r.status_code == 200 and r.json()["status"] == "exited"
    assert not Path(f"/proc/{pid}").exists()
    assert (data_dir / "terminals" / tid / "output.raw").exists()
    assert app_api.delete(f"/v1/terminals/{tid}", params={"purge": "true"}).json()["purged"] is True
    assert not (data_dir / "terminals" / tid).exists()
    assert app_api.get(f"/v1/terminals/{tid}").status_code == 404


def test_wait_timeout_returns_cursor_and_never_hangs(app_api: httpx.Client) -> None:
    tid = _shell(app_api)
    r = app_api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "never-printed"}, "timeout_ms": 200}).json()
    assert r["matched"] is False and r["reason"] == "timeout" and r["elapsed_ms"] >= 200, r
    assert 0 <= r["cursor"] <= r["raw_offset"]


def test_bad_input_gets_clear_errors(app_api: TestClient) -> None:
    tid = _shell(app_api)
    assert app_api.get("/v1/terminals/t_doesnotexist").json()["error"]["code"] == "not_found"
    assert app_api.post("/v1/terminals/t_doesnotexist/input", json={"text": "x"}).status_code == 404
    assert app_api.delete("/v1/terminals/..%2F..%2Fetc").status_code == 404

    bad_key = app_api.post(f"/v1/terminals/{tid}/input", json={"keys": ["Enter", "Hyper-Q"]})
    assert bad_key.status_code == 400
    assert "Hyper-Q" in bad_key.json()["error"]["message"] and "Enter" in bad_key.json()["error"]["message"]

    huge = app_api.post(f"/v1/terminals/{tid}/input", json={"text": "x" * (2 << 20)})
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "too_large"
    too_big_body = app_api.post(f"/v1/terminals/{tid}/input", content=b'{"text": "' + b"x" * (5 << 20) + b'"}')
    assert too_big_body.status_code == 413

    regex = app_api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "(unclosed"}})
    assert regex.status_code == 400 and "invalid regular expression" in regex.json()["error"]["message"]

    negative = app_api.post("/v1/terminals", json={"cols": -5})
    assert negative.status_code == 422 and negative.json()["error"]["code"] == "validation"
    assert app_api.post(f"/v1/terminals/{tid}/resize", json={"cols": 80, "rows": -1}).status_code == 422
    assert app_api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "x"}, "since": 10**12}).status_code == 400
    assert app_api.post("/v1/terminals", content=b"{not json").status_code == 422

    before = {t["id"] for t in app_api.get("/v1/terminals").json()["terminals"]}
    missing = app_api.post("/v1/terminals", json={"command": ["/no/such/program-xyz"]})
    assert missing.status_code == 400 and "command not found" in missing.json()["error"]["message"]
    assert {t["id"] for t in app_api.get("/v1/terminals").json()["terminals"]} == before
    assert sorted(p.name for p in (app_api.app.state.settings.data_dir / "terminals").iterdir()) == sorted(before)
    assert app_api.post("/v1/terminals", json={"cwd": "/no/such/dir"}).status_code == 400

    for path in ("/v1/terminals", "/openapi.json"):
        anonymous = app_api.build_request("GET", path)
        del anonymous.headers["Authorization"]
        assert app_api.send(anonymous).status_code == 401
    wrong = app_api.get("/v1/terminals", headers={"Authorization": "Bearer wrong"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthorized"


def test_child_does_not_see_the_daemon_token(api: httpx.Client) -> None:
    tid = api.post("/v1/terminals", json={"command": "env"}).json()["id"]
    _wait_exit(api, tid)
    raw = _raw(api, tid)
    assert b"TERM=xterm-256color" in raw
    assert b"LOOKOUT_TOKEN" not in raw and b"test-token" not in raw


def test_token_generated_with_mode_0600(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data", token="")
    d.env.pop("LOOKOUT_TOKEN", None)
    d.start()
    try:
        path = tmp_path / "data" / "token"
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        token = path.read_text().strip()
        assert len(token) >= 32
        with d.client(token=token) as api:
            assert api.get("/v1/terminals").status_code == 200
    finally:
        d.stop()


def test_refuses_non_loopback_without_token(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "LOOKOUT_TOKEN"}
    r = subprocess.run(
        [sys.executable, "-m", "lookout", "serve", "--host", "0.0.0.0", "--data-dir", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=30,
    )
    assert r.returncode == 2 and "without a token" in r.stderr


def test_act_answers_lean_by_default_and_whole_on_request(api: httpx.Client, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("PS1='$ '\n")
    spec = {"command": "bash", "cwd": str(home), "env": {"HOME": str(home)}, "cols": 80, "rows": 24}
    tid = api.post("/v1/terminals", json=spec).json()["id"]  # a shell named bare: integrated, idle at its prompt
    assert api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}}).json()["matched"]
    body = {"input": {"text": "echo hi", "keys": ["Enter"]}, "until": {"block_end": True}, "screen": {"compact": True}}
    lean = api.post(f"/v1/terminals/{tid}/act", json=body)
    answer = lean.json()
    assert set(answer) == {"ended", "state", "cursor", "exit_code", "screen"}, answer
    assert (answer["ended"], answer["state"], answer["exit_code"]) == ("block_end", "idle", 0)
    assert answer["screen"]["text"] == ["$ echo hi", "hi", "$"] and set(answer["screen"]) == {"cursor", "rows", "text"}
    rows = count_tokens(orjson.dumps(answer["screen"]["text"]).decode())
    assert count_tokens(lean.text) - rows <= 50
    again = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "^hi"}, "since": answer["cursor"], "timeout_ms": 200})
    assert again.json()["matched"] is False  # the cursor resumes after the command's output
    whole = api.post(f"/v1/terminals/{tid}/act", json={**body, "detail": True}).json()
    assert whole["wait"]["block"] == {"n": 2, "exit_code": 0, "command": "echo hi", "hand": "default"} and whole["wait"]["prompt"] is True
    assert whole["input"]["bytes_written"] == 8 and whole["screen"]["terminal"] == {"width": 80, "height": 24}


def test_input_as_ordered_steps(api: httpx.Client) -> None:
    tid = _shell(api)
    steps = [{"text": "echo A"}, {"paste": "B"}, {"text": "C"}, {"keys": ["Enter"]}]
    listed = api.post(f"/v1/terminals/{tid}/act", json={"input": steps, "until": {"regex": "^ABC$"}, "timeout_ms": 10_000})
    assert listed.json()["ended"] == "regex", listed.text
    sent = api.post(f"/v1/terminals/{tid}/input", json=[{"text": "echo D"}, {"paste": "E"}, {"keys": ["Enter"]}])
    assert sent.status_code == 200, sent.text
    assert api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "^DE$"}}).json()["matched"]
    empty = api.post(f"/v1/terminals/{tid}/input", json=[])
    assert empty.status_code == 400 and "input needs" in empty.json()["error"]["message"]
    assert api.post(f"/v1/terminals/{tid}/input", json=[{"typo": "x"}]).status_code == 422


def test_a_listing_of_some_statuses_lists_those_only(app_api: httpx.Client) -> None:
    live = _shell(app_api)
    ended = app_api.post("/v1/terminals", json={"command": "echo bye; exit 4", "cols": 80, "rows": 24}).json()["id"]
    assert _wait_exit(app_api, ended)["exit_code"] == 4
    listed = {t["id"]: t["status"] for t in app_api.get("/v1/terminals").json()["terminals"]}
    assert listed == {live: "running", ended: "exited"}
    running = app_api.get("/v1/terminals", params={"status": "running"}).json()["terminals"]
    assert [t["id"] for t in running] == [live]
    both = app_api.get("/v1/terminals", params=[("status", "exited"), ("status", "running")]).json()["terminals"]
    assert [t["id"] for t in both] == [t for t in listed]  # oldest first, as the whole listing
    assert app_api.get("/v1/terminals", params={"status": "lost"}).json() == {"terminals": []}
    wrong = app_api.get("/v1/terminals", params={"status": "asleep"})
    assert wrong.status_code == 422 and "status" in wrong.text, wrong.text


def test_a_listing_within_max_tokens_keeps_the_running_and_the_newest_and_says_what_it_left(app_api: httpx.Client) -> None:
    ended = []
    for n in range(5):
        tid = app_api.post("/v1/terminals", json={"command": f"exit {n}", "cols": 80, "rows": 24}).json()["id"]
        assert _wait_exit(app_api, tid)["exit_code"] == n
        ended.append(tid)
        if n == 1:
            live = _shell(app_api)  # older than three of the ended ones
    whole = app_api.get("/v1/terminals").json()
    assert "more" not in whole and len(whole["terminals"]) == 6
    one = max(count_tokens(orjson.dumps(t).decode()) for t in whole["terminals"])
    budget = 3 * one + 120  # three terminals and the `more` that says what was left
    r = app_api.get("/v1/terminals", params={"max_tokens": budget})
    assert r.status_code == 200, r.text
    body = r.json()
    assert count_tokens(r.text) <= budget
    kept = [t["id"] for t in body["terminals"]]
    assert live in kept and kept[-1] == ended[-1]  # the running one, then the newest
    assert kept == [t["id"] for t in whole["terminals"] if t["id"] in kept]  # in the listing's order
    assert body["more"]["count"] == 6 - len(kept) >= 2
    assert body["more"]["statuses"] == {"exited": 6 - len(kept)}
    assert "max_tokens" in body["more"]["note"]
    everything = app_api.get("/v1/terminals", params={"max_tokens": 100_000}).json()
    assert everything == whole  # within a budget it all fits: the whole listing, nothing said
    small = app_api.get("/v1/terminals", params={"max_tokens": 5})
    assert small.status_code == 422 and "max_tokens" in small.text, small.text
