"""Issue 16, hostile patterns and searches: every user pattern (terminal waits and act, page find, device
find) is compiled and searched within bounds; a pattern over them is a 400 that says why; the daemon and
its other clients live on."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from lookout.browser.aria import AriaNode
from lookout.browser.search import find as page_find
from lookout.device.ui_tree import find as device_find
from lookout.device.ui_tree import parse_hierarchy
from tests.conftest import Daemon
from tests.support.http import error_message

NESTED = "((a{1000}){1000}){1000}"
"""With the `regex` module this expanded to 20 GB on the event loop and the OOM killer took the daemon."""


@pytest.fixture
def fenced(tmp_path: Path) -> Any:
    """A daemon whose address space is capped, so a regression fails this test instead of the machine."""
    daemon = Daemon(tmp_path / "data")
    daemon.start_command = ["prlimit", f"--as={6 << 30}", "--"]
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.stop()


def test_hostile_patterns_in_wait_and_act_are_a_400_that_says_why(fenced: Daemon) -> None:
    with fenced.client() as api:
        tid = api.post("/v1/terminals", json={"command": ["cat"]}).json()["id"]
        wait = f"/v1/terminals/{tid}/wait"
        for pattern in (NESTED, "(a{1000}){1000}"):
            message = error_message(api.post(wait, json={"until": {"regex": pattern}, "timeout_ms": 10}), 400)
            assert "nested repeats multiplied together, may be at most 1000" in message
        message = error_message(api.post(wait, json={"until": {"regex": r"(\w+) \1"}, "timeout_ms": 10}), 400)
        assert "backreferences are not supported" in message and "RE2 syntax" in message
        act = {"input": {"text": "never sent\r"}, "until": {"regex": NESTED, "on": "screen"}}
        assert "at most 1000" in error_message(api.post(f"/v1/terminals/{tid}/act", json=act), 400)
        assert api.get(f"/v1/terminals/{tid}").json()["raw_size"] == 0, "a refused act sends nothing"
        assert httpx.get(f"{fenced.url}/healthz").status_code == 200
        assert api.get(f"/v1/terminals/{tid}").json()["status"] == "running"


def test_hostile_patterns_in_page_and_device_find_are_refused_with_the_reason() -> None:
    root = AriaNode("document", children=[AriaNode("button", name="a" * 5000)])
    with pytest.raises(ValueError, match="at most 1000"):
        page_find(root, NESTED, regex=True)
    assert page_find(root, "(a+)+$", regex=True) == ([], 0)  # the line ends in a quote: answered, not run for ages
    assert page_find(root, r'"(a+)+"', regex=True)[1] == 1
    xml = ('<?xml version="1.0"?><hierarchy><node index="0" text="' + "a" * 5000 + 'b" resource-id="" '
           'class="android.widget.TextView" package="p" content-desc="" bounds="[0,0][10,10]"/></hierarchy>')  # fmt: skip
    nodes = parse_hierarchy(xml.encode())
    with pytest.raises(ValueError, match=r"text: .*at most 1000"):
        device_find(nodes, text=NESTED, regex=True)
    assert device_find(nodes, text="(a+)+$", regex=True) == []
    with pytest.raises(ValueError, match="over the limit"):  # RE2's DFA gives up here: every byte costs 7000 steps
        device_find(nodes * 20, text=r"(?s)a.{999}c", regex=True)


def _timed(results: list[tuple[float, httpx.Response]], call: Any) -> threading.Thread:
    def run() -> None:
        response = call()
        results.append((time.monotonic(), response))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_healthz_answers_while_twenty_hostile_waits_run(daemon: Daemon) -> None:
    """(a+)+$ against a 5,000-`a` line: with a backtracking engine 20 such waits held /healthz 15 s. Each
    wait here runs to its own timeout (no match), so /healthz must answer before the first of them ends."""
    line = "import sys, time; sys.stdout.write('a' * 5000 + 'b\\n'); sys.stdout.flush(); time.sleep(600)"
    with daemon.client() as api:
        tid = api.post("/v1/terminals", json={"command": [sys.executable, "-c", line]}).json()["id"]
        ready = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "b$"}, "since": 0, "timeout_ms": 30000})
        assert ready.json()["matched"]
        results: list[tuple[float, httpx.Response]] = []
        # long enough that a loaded machine's slowness cannot pass for a held loop
        bodies = [{"until": {"regex": "(a+)+$"}, "since": 0, "timeout_ms": 30_000}] * 10 + \
                 [{"until": {"regex": "(a+)+x", "on": "screen"}, "timeout_ms": 30_000}] * 10  # fmt: skip

        def wait(body: dict[str, Any]) -> httpx.Response:
            with daemon.client(timeout=120) as client:
                return client.post(f"/v1/terminals/{tid}/wait", json=body)

        threads = [_timed(results, lambda b=b: wait(b)) for b in bodies]
        health = httpx.get(f"{daemon.url}/healthz", timeout=60)
        answered = time.monotonic()
        for thread in threads:
            thread.join()
    assert health.status_code == 200 and len(results) == len(bodies), "every wait answered"
    assert answered < min(done for done, _ in results), "/healthz answered while the hostile waits ran"
    for _, response in results:
        body = response.json()
        assert response.status_code == 200 and body["matched"] is False and body["reason"] == "timeout", body
