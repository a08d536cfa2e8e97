"""Leases over HTTP with the daemon as a subprocess (lookout.core.leases): one agent holds a terminal, another's
input is a 409 naming it, the holder's goes in; renew and let go by another hand are refused; bad durations and
an unknown lease are 4xx with the reason; the lease is listed; it survives a kill -9 of the daemon and ends by
itself; a person in the web UI types into a held terminal only by taking over, which the timeline records."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import httpx
import pytest
import websockets

from tests.conftest import REPO, Daemon
from tests.support.polling import eventually

BASH = ["bash", "--norc", "--noprofile"]
A = {"X-Lookout-Agent": "agent-A"}
B = {"X-Lookout-Agent": "agent-B"}


def _shell(api: httpx.Client) -> str:
    tid = api.post("/v1/terminals", json={"command": BASH, "cols": 80, "rows": 24}).json()["id"]
    assert api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}}).json()["matched"]
    return tid


def _type(api: httpx.Client, tid: str, text: str, agent: dict[str, str]) -> httpx.Response:
    return api.post(f"/v1/terminals/{tid}/input", json={"text": text}, headers=agent)


def test_a_held_terminal_refuses_another_hand_and_takes_its_holder(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    taken = api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 600}, headers=A)
    assert taken.status_code == 200, taken.text
    assert taken.json()["lease"]["holder"] == "agent-A" and taken.json()["renewed"] is False
    refused = _type(api, tid, "echo from-B\r", B)
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "leased" and "'agent-A'" in error["message"]
    assert error["details"]["expires_at"] == taken.json()["lease"]["expires_at"] in error["message"]
    acted = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo B-ACT\r"}, "until": {"regex": "B-ACT"}},
                     headers=B)  # fmt: skip
    assert acted.status_code == 409
    assert _type(api, tid, "echo from-A\r", A).status_code == 200
    assert api.delete(f"/v1/terminals/{tid}", headers=B).status_code == 409  # nor may B end it
    resized = api.post(f"/v1/terminals/{tid}/resize", json={"cols": 100, "rows": 30}, headers=B)
    assert resized.status_code == 409 and resized.json()["error"]["code"] == "leased"  # nor resize it
    assert api.post(f"/v1/terminals/{tid}/resize", json={"cols": 90, "rows": 30}, headers=A).status_code == 200
    listed = {t["id"]: t for t in api.get("/v1/terminals").json()["terminals"]}
    assert listed[tid]["lease"]["holder"] == "agent-A"
    assert api.get(f"/v1/terminals/{tid}").json()["lease"]["holder"] == "agent-A"
    assert api.get(f"/v1/terminals/{tid}/lease").json()["lease"]["holder"] == "agent-A"
    renew_b = api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 60}, headers=B)
    assert renew_b.status_code == 409 and "only 'agent-A' renews" in renew_b.json()["error"]["message"]
    let_go_b = api.delete(f"/v1/terminals/{tid}/lease", headers=B)
    assert let_go_b.status_code == 409 and "agent-A" in let_go_b.json()["error"]["message"]
    renewed = api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 900}, headers=A).json()
    assert renewed["renewed"] is True and renewed["lease"]["expires_in_s"] > 600
    assert api.delete(f"/v1/terminals/{tid}/lease", headers=A).json()["let_go"]["holder"] == "agent-A"
    assert api.get(f"/v1/terminals/{tid}/lease").json() == {"lease": None}
    assert _type(api, tid, "echo from-B\r", B).status_code == 200  # free for everyone again


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [({"duration_s": 0}, 400, "from 1 to 3600"), ({"duration_s": -3}, 400, "from 1 to 3600"),
     ({"duration_s": 10**12}, 400, "from 1 to 3600"), ({"duration_s": "long"}, 422, "duration_s"),
     ({}, 422, "duration_s"), ({"duration_s": 10, "holder": "x"}, 422, "holder")],
)  # fmt: skip
def test_bad_lease_input_is_a_4xx_with_the_reason(
    app_api: httpx.Client, body: dict[str, object], status: int, words: str
) -> None:
    tid = _shell(app_api)
    answer = app_api.post(f"/v1/terminals/{tid}/lease", json=body, headers=A)
    assert answer.status_code == status and words in answer.json()["error"]["message"], answer.text
    unknown = app_api.delete(f"/v1/terminals/{tid}/lease", headers=A)
    assert unknown.status_code == 404 and "has no lease" in unknown.json()["error"]["message"]
    assert app_api.post("/v1/terminals/t_nope/lease", json={"duration_s": 5}).status_code == 404


def test_a_lease_survives_a_kill_9_of_the_daemon_and_ends_by_itself(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 600}, headers=A).raise_for_status()
    daemon.stop(signal.SIGKILL)
    listed = subprocess.run([sys.executable, "-m", "lookout", "ls", "--data-dir", str(daemon.data_dir)], cwd=REPO,
                            capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    assert f"{tid}: " in listed and "held by 'agent-A' until " in listed  # `lookout ls` with no daemon
    daemon.start()
    with daemon.client() as again:
        eventually(lambda: again.get(f"/v1/terminals/{tid}").json()["status"] == "running", what="adopted again")
        assert again.get(f"/v1/terminals/{tid}").json()["lease"]["holder"] == "agent-A"
        assert _type(again, tid, "echo from-B\r", B).status_code == 409
        assert _type(again, tid, "echo from-A\r", A).status_code == 200
        again.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 1}, headers=A).raise_for_status()
        eventually(lambda: _type(again, tid, "echo B-AFTER\r", B).status_code == 200, what="the lease to expire",
                   interval=0.3)  # fmt: skip
        assert again.get(f"/v1/terminals/{tid}").json()["lease"] is None


async def test_a_person_types_into_a_held_terminal_only_by_taking_over(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 600}, headers=A).raise_for_status()
    url = f"ws://127.0.0.1:{daemon.port}/v1/terminals/{tid}/stream?mode=raw&agent=web-ui&token={daemon.token}"
    async with websockets.connect(url) as ws:
        hydrate = json.loads(await ws.recv())
        assert hydrate["lease"]["holder"] == "agent-A"  # the card shows the lease before anyone types
        await ws.send(json.dumps({"type": "input", "text": "echo NOT-TYPED\r"}))
        while isinstance(message := await ws.recv(), bytes):
            pass
        error = json.loads(message)["error"]
        assert error["code"] == "leased" and "agent-A" in error["message"]
        await ws.send(json.dumps({"type": "input", "text": "echo PERSON-$((6*7))\r", "take_over": True}))
        seen = b""
        while b"PERSON-42" not in seen:
            message = await ws.recv()
            seen += message if isinstance(message, bytes) else b""
    assert b"NOT-TYPED" not in seen
    assert api.get(f"/v1/terminals/{tid}").json()["lease"]["taken_over_by"] == ["web-ui"]
    frames = api.get("/v1/timeline/frames", params={"agent": "web-ui"}).json()["frames"]
    assert any("despite the lease of 'agent-A'" in json.dumps(f) for f in frames), frames


def test_a_lease_survives_a_hot_restart(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    taken = api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 600}, headers=A).json()["lease"]
    restarted = subprocess.run([sys.executable, "-m", "lookout", "restart", "--data-dir", str(daemon.data_dir)], cwd=REPO,
                               env=daemon.env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert restarted.returncode == 0, restarted
    eventually(lambda: daemon.proc is not None and daemon.proc.poll() is not None, timeout=60,
               what="the old daemon to end")  # fmt: skip
    assert api.get(f"/v1/terminals/{tid}").json()["lease"]["expires_at"] == taken["expires_at"]
    assert _type(api, tid, "echo from-B\r", B).status_code == 409
    assert api.delete(f"/v1/terminals/{tid}/lease", headers=A).status_code == 200  # the new daemon wrote it down
    assert _type(api, tid, "echo from-B\r", B).status_code == 200


def test_lookout_kill_of_a_leased_terminal_says_whose_lease_it_went_through(daemon: Daemon, api: httpx.Client) -> None:
    tid, other = _shell(api), _shell(api)
    api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 600}, headers=A).raise_for_status()
    killed = subprocess.run([sys.executable, "-m", "lookout", "kill", tid, other, "--data-dir", str(daemon.data_dir)],
                            cwd=REPO, capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    lines = {line.split(":", 1)[0]: line for line in killed.splitlines()}
    assert "held by 'agent-A' until " in lines[tid], killed  # an operator's kill is not refused, but said
    assert "held by" not in lines[other], killed
    eventually(lambda: api.get(f"/v1/terminals/{tid}").json()["status"] == "exited", what="it to end")
