"""Nothing a program or a damaged file sends can stop the daemon (issue 35, item 1), each attack run for real: a
program inside a terminal sends its own holder sizes of 0x0, 80x0 and 70000x-1 and 100k-deep JSON; a stopped
daemon's data dir gets a journal with 0x0 and 65535x65535 resize records, a checkpoint and a meta.json of such
sizes. The daemon stays up, the terminal keeps a valid size, and what cannot be rebuilt is `lost` (or a 410)
with the reason."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import subprocess
import sys
from pathlib import Path

import httpx
import websockets

from lookout.terminal.journal.reader import read_index
from tests.conftest import REPO, Daemon
from tests.support.holder_script import CONNECT
from tests.support.polling import eventually
from tests.support.processes import RUNGS, running

ATTACK = CONNECT + r"""

def answer(s, rest):
    data = rest
    while True:
        while b"\n" in data:
            line, _, data = data.partition(b"\n")
            message = json.loads(line)
            if message["op"] == "error":
                return message, data
        chunk = s.recv(65536)
        if not chunk:
            return {"op": "closed"}, b""
        data += chunk


s, rest = connect()
answers = []
for cols, rows in [(0, 0), (80, 0), (70000, -1)]:
    s.sendall(json.dumps({"op": "resize", "cols": cols, "rows": rows}).encode() + b"\n")
    message, rest = answer(s, rest)
    answers.append(message)
deep, rest = connect()
deep.sendall(b'{"op":"mark","label":' + b"[" * 100000 + b"]" * 100000 + b"}\n")
answers.append(answer(deep, rest)[0])
print("ANSWERS " + json.dumps(answers))
print("attack" + "-done")
"""


def _create(api: httpx.Client, command: str) -> str:
    r = api.post("/v1/terminals", json={"command": command, "cols": 80, "rows": 24})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_a_program_that_sends_its_holder_hostile_sizes_changes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    script = tmp_path / "attack.py"
    script.write_text(ATTACK)
    d = Daemon(data).start()
    with d.client() as api:
        tid = _create(api, "bash")
        api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "since": 0, "timeout_ms": 30_000})
        command = f"{sys.executable} {script} {data / 'holders'} {tid}.sock\r"
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": command}, "until": {"regex": "^attack-done"},
                                                       "timeout_ms": 60_000, "screen": {"layers": "text"}})  # fmt: skip
        assert r.json()["ended"] == "regex", r.text
        raw = api.get(f"/v1/terminals/{tid}/raw", params={"offset": 0, "limit": 1 << 20}).json()
        output = base64.b64decode(raw["data_b64"]).decode(errors="replace")
        answers = json.loads(output.split("ANSWERS ", 2)[-1].split("\r\n", 1)[0])
        assert [a["op"] for a in answers] == ["error"] * 4, answers
        assert all("resize refused" in a["message"] for a in answers[:3]), answers
        assert "0x0 is outside" in answers[0]["message"] and "80x0 is outside" in answers[1]["message"], answers
        assert "70000" in answers[2]["message"] and "not a JSON message" in answers[3]["message"], answers
        assert api.get("/healthz").status_code == 200
        info = api.get(f"/v1/terminals/{tid}").json()
        assert (info["status"], info["cols"], info["rows"]) == ("running", 80, 24), info
        assert [e.value for e in read_index(data / "terminals" / tid) if e.kind == "r"] == ["80x24"]
    listed = subprocess.run([sys.executable, "-m", "lookout", "ls", "--data-dir", str(data)], cwd=REPO,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert f"{tid}: bash [80x24] running" in listed.stdout, listed
    d.stop()
    again = Daemon(data).start()
    with again.client() as api:
        info = api.get(f"/v1/terminals/{tid}").json()
        assert (info["status"], info["cols"], info["rows"]) == ("running", 80, 24), info
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo adopted-$((6*7))\r"},
                                                       "until": {"regex": "^adopted-42"}})  # fmt: skip
        assert r.json()["ended"] == "regex", r.text
        assert api.get(f"/v1/terminals/{tid}/screen", params={"at": 0}).status_code == 200
    again.finish()


async def _stream_close(daemon: Daemon, tid: str) -> int | None:
    """The close code of a terminal's live stream that is refused at once."""
    url = f"ws://127.0.0.1:{daemon.port}/v1/terminals/{tid}/stream?token={daemon.token}"
    async with websockets.connect(url) as ws:
        with contextlib.suppress(websockets.ConnectionClosed):
            await ws.recv()
        return ws.close_code


def _append(path: Path, record: list[object]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(record) + "\n")


def test_damaged_sizes_in_a_data_dir_leave_their_terminal_lost_or_a_410_and_the_daemon_up(tmp_path: Path) -> None:
    data = tmp_path / "data"
    d = Daemon(data).start()
    with d.client() as api:
        live = _create(api, "bash")
        exited = {name: _create(api, f"echo {name}") for name in ("journal", "checkpoint", "meta")}
        for tid in exited.values():
            eventually(lambda t=tid: api.get(f"/v1/terminals/{t}").json()["status"] == "exited", what="echo to end")
        eventually(lambda: api.get(f"/v1/terminals/{live}").json()["state"] == "idle", what="the shell's prompt")
        live_pid = api.get(f"/v1/terminals/{live}").json()["pid"]
        truth = api.get(f"/v1/terminals/{exited['checkpoint']}/screen").json()["text"]
    d.stop()
    terminals = data / "terminals"
    size = (terminals / live / "output.raw").stat().st_size
    _append(terminals / live / "output.idx", [999.0, "r", size, "0x0"])
    _append(terminals / exited["journal"] / "output.idx", [999.0, "r", 0, "65535x65535"])
    end = (terminals / exited["checkpoint"] / "output.raw").stat().st_size
    for offset in range(end + 1):
        path = terminals / exited["checkpoint"] / "checkpoints" / f"{offset:016d}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"offset": offset, "cols": 0, "rows": 0, "dump": "\x1b[HFORGED", "kept": {},
                                    "title": ""}))  # fmt: skip
    meta_path = terminals / exited["meta"] / "meta.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "cols": 65535, "rows": 0}))
    again = Daemon(data).start()
    with again.client() as api:
        assert api.get("/healthz").status_code == 200
        info = api.get(f"/v1/terminals/{live}").json()
        assert info["status"] == "lost" and "cannot be rebuilt" in info["lost_reason"], info
        assert "0x0" in info["lost_reason"], info
        # a screen replayed through the damaged record is a 410; one that is not (before it, or from the exit's
        # checkpoint after it) is served
        for tid, through, served in ((live, {}, {"at": 0}), (exited["journal"], {"at": 0}, {})):
            r = api.get(f"/v1/terminals/{tid}/screen", params=through)
            assert r.status_code == 410 and "resize" in r.json()["error"]["message"], r.text
            assert api.get(f"/v1/terminals/{tid}/screen", params=served).status_code == 200
            assert api.get(f"/v1/terminals/{tid}/recording").status_code == 410
        assert asyncio.run(_stream_close(again, live)) == 4410
        r = api.get(f"/v1/terminals/{exited['checkpoint']}/screen", params={"at": end})
        assert r.status_code == 200 and r.json()["text"] == truth, "a damaged checkpoint is passed over"
        meta = api.get(f"/v1/terminals/{exited['meta']}").json()
        assert meta["status"] == "lost" and "65535x0 is outside" in meta["lost_reason"], meta
        assert api.get(f"/v1/terminals/{exited['meta']}/screen").status_code == 200, "its journal is intact"
        r = api.delete(f"/v1/terminals/{live}")  # a lost terminal whose holder lives: the holder ends it
        assert r.status_code == 200 and r.json()["ended_by"] in RUNGS, r.text
        assert not running(live_pid)
        new = _create(api, "true")
        eventually(lambda: api.get(f"/v1/terminals/{new}").json()["status"] == "exited", what="`true` to end")
        assert api.get("/healthz").status_code == 200
        assert again.proc is not None and again.proc.poll() is None, "the daemon is up"
    listed = subprocess.run([sys.executable, "-m", "lookout", "ls", "--data-dir", str(data)], cwd=REPO,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert f"{exited['meta']}:" in listed.stdout and "unreadable" in listed.stdout, listed
    again.finish()
