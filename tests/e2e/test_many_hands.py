"""Two hands on one terminal (issue 44): two HTTP clients naming distinct agents (`X-Lookout-Agent`) drive one
real bash (HOME a temp dir) through the daemon's process. Every answer is the caller's own, or says it is not.
Each scenario runs with the roles both ways round, and with a CPU hog (`yes > /dev/null`) beside the daemon."""
from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from lookout.clients.attach.client import AGENT as ATTACH_AGENT
from tests.conftest import Daemon
from tests.support.hands import GATE, ORDERS, act_line, bash_terminal, hands
from tests.support.http import ok_json
from tests.support.polling import eventually

LONG = f"echo RUN-$((1+1)); {GATE}; (exit 3)"
READ = 'echo RUN-$((1+1)); read -r line; echo "GOT:$line"; (exit 7)'
PERSON_WAITS = f"echo RUN-$((1+1)); {GATE}; (exit 9)"


@pytest.fixture(params=[False, True], ids=["calm", "hog"])
def load(request: pytest.FixtureRequest) -> Iterator[bool]:
    """With `hog`, a `yes > /dev/null` busy beside the daemon, as on a loaded machine."""
    if not request.param:
        yield False
        return
    hog = subprocess.Popen(["sh", "-c", "exec yes > /dev/null"])
    try:
        yield True
    finally:
        hog.kill()
        hog.wait()


def _size(api: httpx.Client, tid: str) -> int:
    return int(ok_json(api.get(f"/v1/terminals/{tid}"))["raw_size"])


def _written(api: httpx.Client, tid: str, pattern: str, since: int) -> None:
    """Returns once the output holds `pattern` after `since`, echo included (a third hand watches)."""
    body = {"until": {"regex": pattern, "echo": True}, "since": since, "timeout_ms": 30_000}
    seen = ok_json(api.post(f"/v1/terminals/{tid}/wait", json=body, headers={"X-Lookout-Agent": "watcher"}))
    assert seen["matched"], seen


def _acting(pool: ThreadPoolExecutor, api: httpx.Client, tid: str, line: str, **until: Any) -> Future[dict[str, Any]]:
    """The act of `line` (which begins by printing RUN-2) under way in a thread; returns once it runs."""
    since = _size(api, tid)
    future = pool.submit(act_line, api, tid, line, until or None)
    _written(api, tid, "RUN-2", since)
    return future


def _open(home: Path) -> None:
    (home / "gate").touch()


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_a_long_command_then_a_short_one_each_answered_with_its_own_block(
    daemon: Daemon, tmp_path: Path, first: str, second: str, load: bool
) -> None:
    home = tmp_path / "home"
    with hands(daemon, first, second) as h, ThreadPoolExecutor(2) as pool:
        tid = bash_terminal(h[first], home)
        since = _size(h[first], tid)
        long = _acting(pool, h[first], tid, LONG)
        later = pool.submit(act_line, h[second], tid, "(exit 5)")
        _written(h[first], tid, re.escape("(exit 5)"), since)
        _open(home)
        mine, short = long.result(), later.result()
    assert short["exit_code"] == 5 and short["wait"]["block"]["command"] == "(exit 5)"
    assert short["wait"]["block"]["hand"] == second and "standing" not in short["wait"]
    assert mine["exit_code"] == 3 and mine["wait"]["block"]["command"] == LONG
    assert mine["wait"]["block"]["hand"] == first
    assert [i["hand"] for i in mine["other_hands"]] == [second]  # B wrote while A's call ran
    assert "(exit 5)" in mine["other_hands"][0]["text"] and mine["other_hands"][0]["raw_offset"] > 0
    assert f"another hand wrote to this terminal while your call ran: {second}" in mine["note"]
    assert "other_hands" not in short  # nobody wrote after B's input

    for hand, command, code in ((first, LONG, 3), (second, "(exit 5)", 5)):
        context = ok_json(h_get(daemon, hand, "/v1/timeline/context", {"agent": hand, "resource": f"terminal:{tid}"}))
        text = "\n".join(m["content"] for m in context["messages"])
        assert f"`{command}` exited {code}" in text, text
        other = "(exit 5)" if hand == first else LONG
        assert f"`{other}` exited" not in text, text


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_a_line_typed_ahead_is_answered_by_its_own_block_in_a_wait_without_since(
    daemon: Daemon, tmp_path: Path, first: str, second: str, load: bool
) -> None:
    home = tmp_path / "home"
    with hands(daemon, first, second) as h, ThreadPoolExecutor(1) as pool:
        tid = bash_terminal(h[first], home)
        since = _size(h[first], tid)
        long = _acting(pool, h[first], tid, f"echo RUN-$((1+1)); {GATE}; (exit 4)")
        ok_json(h[second].post(f"/v1/terminals/{tid}/input", json={"text": "echo AHEAD; (exit 6)", "keys": ["Enter"]}))
        _written(h[first], tid, "AHEAD", since)
        _open(home)
        ahead = ok_json(h[second].post(f"/v1/terminals/{tid}/wait", json={"until": {"block_end": True},
                                                                         "timeout_ms": 30_000}))  # fmt: skip
        mine = long.result()
    assert ahead["matched"] and ahead["exit_code"] == 6, ahead
    assert ahead["block"]["command"] == "echo AHEAD; (exit 6)" and ahead["block"]["hand"] == second
    assert mine["exit_code"] == 4 and mine["wait"]["block"]["hand"] == first


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_input_into_another_hands_running_program_is_answered_as_such(
    daemon: Daemon, tmp_path: Path, first: str, second: str, load: bool
) -> None:
    with hands(daemon, first, second) as h, ThreadPoolExecutor(1) as pool:
        tid = bash_terminal(h[first], tmp_path / "home")
        program = _acting(pool, h[first], tid, READ)
        into = act_line(h[second], tid, "from-the-other-hand")
        mine = program.result()
        blocks = ok_json(h[first].get(f"/v1/terminals/{tid}/blocks"))["blocks"]
    assert into["wait"]["standing"] == "before" and "exit_code" not in into, into  # not the caller's exit code
    assert into["wait"]["block"]["hand"] == first and into["wait"]["block"]["exit_code"] == 7
    assert "another hand's command" in into["note"]
    assert mine["exit_code"] == 7 and mine["wait"]["block"]["hand"] == first
    assert "GOT:from-the-other-hand" in mine["screen"]["text"]
    assert [b["command"] for b in blocks] == [READ]  # the other hand's line was no command


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_a_regex_is_not_met_by_the_echo_of_another_hands_input(
    daemon: Daemon, tmp_path: Path, first: str, second: str, load: bool
) -> None:
    home = tmp_path / "home"
    with hands(daemon, first, second) as h, ThreadPoolExecutor(2) as pool:
        tid = bash_terminal(h[first], home)
        since = _size(h[first], tid)
        waiting = _acting(pool, h[first], tid, f"echo RUN-$((1+1)); {GATE}; echo X-$((40+2))", regex=r"X-\w+")
        later = pool.submit(act_line, h[second], tid, "echo X-other")
        _written(h[first], tid, "X-other", since)
        _open(home)
        mine, other = waiting.result(), later.result()
    assert mine["wait"]["matched"] and mine["wait"]["match"]["text"] == "X-42", mine
    assert [i["hand"] for i in mine["other_hands"]] == [second]
    assert other["exit_code"] == 0 and other["wait"]["block"]["command"] == "echo X-other"


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_a_wait_without_since_starts_at_the_callers_own_last_input(
    daemon: Daemon, tmp_path: Path, first: str, second: str, load: bool
) -> None:
    with hands(daemon, first, second) as h:
        tid = bash_terminal(h[first], tmp_path / "home")
        assert act_line(h[first], tid, "echo OWN-$((6*7))")["exit_code"] == 0
        assert act_line(h[second], tid, "echo THEIRS")["exit_code"] == 0
        found = ok_json(h[first].post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "OWN-42"},
                                                                        "timeout_ms": 5_000}))  # fmt: skip
    assert found["matched"] and found["match"]["text"] == "OWN-42", found
    assert [i["hand"] for i in found["other_hands"]] == [second]


@pytest.mark.parametrize("person", ["web-ui", ATTACH_AGENT])
def test_a_person_typing_while_an_agent_acts(daemon: Daemon, tmp_path: Path, person: str, load: bool) -> None:
    """A person's keys through the stream the web UI and `lookout attach` use (the WebSocket, named by its
    `agent` parameter as they name it), one key a message as they send them, while an agent's act runs."""
    home = tmp_path / "home"
    with hands(daemon, "agent") as h, ThreadPoolExecutor(1) as pool:
        tid = bash_terminal(h["agent"], home)
        since = _size(h["agent"], tid)
        acting = _acting(pool, h["agent"], tid, PERSON_WAITS)
        url = daemon.url.replace("http", "ws", 1) + f"/v1/terminals/{tid}/stream?mode=raw&agent={person}&token={daemon.token}"
        with connect(url) as ws:
            for key in "echo PERSON; (exit 2)\r":
                ws.send(key.encode())
            _written(h["agent"], tid, re.escape("(exit 2)"), since)
            _open(home)
            answer = acting.result()
            person_block = eventually(lambda: _block(h["agent"], tid, "echo PERSON; (exit 2)"), timeout=30,
                                      what="the person's command to end")  # fmt: skip
    assert answer["exit_code"] == 9 and answer["wait"]["block"]["hand"] == "agent"
    assert {i["hand"] for i in answer["other_hands"]} == {person}
    assert person_block["exit_code"] == 2
    context = ok_json(h_get(daemon, person, "/v1/timeline/context", {"agent": person, "resource": f"terminal:{tid}"}))
    text = "\n".join(m["content"] for m in context["messages"])
    assert "`echo PERSON; (exit 2)` exited 2" in text and f"`{PERSON_WAITS}` exited" not in text, text


def _block(api: httpx.Client, tid: str, command: str) -> dict[str, Any] | None:
    blocks = ok_json(api.get(f"/v1/terminals/{tid}/blocks"))["blocks"]
    return next((b for b in blocks if b["command"] == command), None)


def h_get(daemon: Daemon, agent: str, path: str, params: dict[str, str]) -> httpx.Response:
    with daemon.client() as client:
        return client.get(path, params=params, headers={"X-Lookout-Agent": agent})


def test_whose_commands_are_is_known_after_a_restart(daemon: Daemon, tmp_path: Path) -> None:
    """The inputs and each hand's last input are on disk: commands that end while no daemon runs are credited,
    and each hand's wait without since answered, by the daemon that adopts the terminal."""
    home = tmp_path / "home"
    with hands(daemon, "A", "B") as h:
        tid = bash_terminal(h["A"], home)
        since = _size(h["A"], tid)
        ok_json(h["A"].post(f"/v1/terminals/{tid}/input", json={"text": LONG, "keys": ["Enter"]}))
        _written(h["A"], tid, "RUN-2", since)
        ok_json(h["B"].post(f"/v1/terminals/{tid}/input", json={"text": "echo AFTER; (exit 6)", "keys": ["Enter"]}))
        _written(h["A"], tid, "AFTER", since)
    daemon.stop(signal.SIGKILL)
    _open(home)  # both commands end while no daemon runs
    daemon.start()
    until = {"until": {"block_end": True}, "timeout_ms": 30_000}
    with hands(daemon, "A", "B") as h:
        theirs = ok_json(h["B"].post(f"/v1/terminals/{tid}/wait", json=until))
        mine = ok_json(h["A"].post(f"/v1/terminals/{tid}/wait", json=until))
        blocks = ok_json(h["A"].get(f"/v1/terminals/{tid}/blocks"))["blocks"]
    assert theirs["exit_code"] == 6 and theirs["block"] == {"n": 2, "exit_code": 6, "command": "echo AFTER; (exit 6)",
                                                            "hand": "B"}, theirs  # fmt: skip
    assert mine["exit_code"] == 3 and mine["block"]["hand"] == "A" and mine["block"]["n"] == 1, mine
    assert [(b["exit_code"], b["hand"]) for b in blocks] == [(3, "A"), (6, "B")]  # the listing says whose each is
