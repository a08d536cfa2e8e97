"""Live streams, deltas, events and recordings end to end, with the real `websockets` client."""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from lookout.config import Settings
from lookout.server import create_app
from lookout.terminal.journal.deltas import MIN_INTERVAL_S, UNWATCHED_INTERVAL_S
from lookout.terminal.screen.engines import create_engine
from tests.conftest import Daemon

BASH = ["bash", "--norc", "--noprofile"]
TOKEN = "test-token-0123456789"


def _ws_url(daemon: Daemon, path: str) -> str:
    sep = "&" if "?" in path else "?"
    return f"ws://127.0.0.1:{daemon.port}{path}{sep}token={daemon.token}"


def _shell(api: httpx.Client, cols: int = 80, rows: int = 24) -> str:
    tid = api.post("/v1/terminals", json={"command": BASH, "cols": cols, "rows": rows}).json()["id"]
    assert api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}}).json()["matched"]
    return tid


async def _until_text(ws: Any, needle: bytes, timeout: float = 10) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        message = await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic()))
        if isinstance(message, bytes):
            seen += message
    return seen


async def test_raw_stream_hydrates_then_follows_and_takes_input(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo before-connect\r"}, "until": {"regex": "^before-connect"}})
    async with websockets.connect(_ws_url(daemon, f"/v1/terminals/{tid}/stream?mode=raw")) as ws:
        hydrate = json.loads(await ws.recv())
        assert hydrate["type"] == "hydrate" and (hydrate["cols"], hydrate["rows"]) == (80, 24)
        replica = create_engine("pyte", 80, 24, 0)  # a different emulator repaints the same screen
        replica.feed(hydrate["data"].encode())
        screen = api.get(f"/v1/terminals/{tid}/screen").json()
        assert replica.text_rows() == screen["text"]
        assert (replica.cursor().col, replica.cursor().row) == (screen["cursor"]["left"], screen["cursor"]["top"])

        await ws.send(json.dumps({"type": "input", "text": "echo streamed-$((6*7))\r"}))
        await _until_text(ws, b"streamed-42")
        steps = [{"text": "echo in-"}, {"paste": "order"}, {"text": "-$((6*7))"}, {"keys": ["Enter"]}]
        await ws.send(json.dumps({"type": "input", "steps": steps}))
        await _until_text(ws, b"in-order-42")
        await ws.send(json.dumps({"type": "resize", "cols": 90, "rows": 20}))
        notice = json.loads(await asyncio.wait_for(_first_text(ws), 10))
        assert notice == {"type": "resize", "cols": 90, "rows": 20}, "every viewer is told the PTY's new size"
        await ws.send(json.dumps({"type": "input", "keys": ["Nope"]}))
        error = json.loads(await asyncio.wait_for(_first_text(ws), 10))
        assert error["type"] == "error" and "Nope" in error["error"]["message"]
    info = api.get(f"/v1/terminals/{tid}").json()
    assert (info["cols"], info["rows"]) == (90, 20)


async def _first_text(ws: Any) -> str:
    while True:
        message = await ws.recv()
        if isinstance(message, str):
            return message


async def test_two_clients_see_the_same_output_and_the_exit(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    url = _ws_url(daemon, f"/v1/terminals/{tid}/stream")
    async with websockets.connect(url) as a, websockets.connect(url) as b:
        for ws in (a, b):
            assert json.loads(await ws.recv())["type"] == "hydrate"
        api.post(f"/v1/terminals/{tid}/input", json={"text": "echo shared-line; exit 5\r"})
        for ws in (a, b):
            await _until_text(ws, b"shared-line")
            exit_message = json.loads(await asyncio.wait_for(_first_text(ws), 10))
            assert exit_message == {"type": "exit", "exit_code": 5}


async def test_a_client_that_never_reads_slows_nobody(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api, cols=120, rows=40)
    url = _ws_url(daemon, f"/v1/terminals/{tid}/stream")
    lines = 400_000
    async with websockets.connect(url, max_queue=1) as stuck, websockets.connect(url) as reader:
        assert json.loads(await reader.recv())["type"] == "hydrate"
        api.post(f"/v1/terminals/{tid}/input", json={"text": f"seq 1 {lines}; echo flood-done\r"})
        received = await _until_text(reader, b"\nflood-done", timeout=120)
        assert b"\r\n%d\r\n" % lines in received or b"%d\r\n" % lines in received
        info = api.get(f"/v1/terminals/{tid}").json()
        assert info["state"] in ("idle", "running") and info["status"] == "running"
        assert api.get(f"/v1/terminals/{tid}/screen").status_code == 200
        del stuck


async def test_compression_is_off_unless_asked_for(daemon: Daemon, api: httpx.Client, tmp_path: Path) -> None:
    """The client offers permessage-deflate; the daemon takes it only with LOOKOUT_WS_COMPRESSION."""
    tid = _shell(api)
    async with websockets.connect(_ws_url(daemon, f"/v1/terminals/{tid}/stream")) as ws:
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
        assert json.loads(await ws.recv())["type"] == "hydrate"
    compressing = Daemon(tmp_path / "compressing", LOOKOUT_WS_COMPRESSION="true").start()
    try:
        with compressing.client() as other:
            tid = _shell(other)
        async with websockets.connect(_ws_url(compressing, f"/v1/terminals/{tid}/stream")) as ws:
            assert "permessage-deflate" in ws.response.headers.get("Sec-WebSocket-Extensions", "")
            assert json.loads(await ws.recv())["type"] == "hydrate"
    finally:
        compressing.stop()


async def test_deltas_stream_and_http_cursor(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    async with websockets.connect(_ws_url(daemon, f"/v1/terminals/{tid}/stream?mode=deltas")) as ws:
        full = json.loads(await ws.recv())
        assert full["type"] == "delta" and full["full"] is True and len(full["changed"]) == 24
        api.post(f"/v1/terminals/{tid}/input", json={"text": "echo delta-row\r"})
        deadline = time.monotonic() + 10
        rows: dict[int, str] = {}
        while not any(text == "delta-row" for text in rows.values()):
            delta = json.loads(await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic())))
            rows.update(dict(delta["changed"]))
    page = api.get(f"/v1/terminals/{tid}/deltas", params={"cursor": 0, "limit": 1000}).json()
    assert page["resume_cursor"] == page["file_size"] > 0
    assert any(text == "delta-row" for d in page["deltas"] for _, text in d["changed"])
    bad = api.get(f"/v1/terminals/{tid}/deltas", params={"cursor": 1})
    assert bad.status_code == 400 and "resume_cursor" in bad.json()["error"]["message"]


SPINNER = (
    "import sys, time\nsys.stdin.readline()\n"
    "for i in range(300):\n    sys.stdout.write('\\rspin %d' % i); sys.stdout.flush(); time.sleep(0.005)\n"
)


def _spin_seconds(deltas: list[dict[str, Any]]) -> float:
    return deltas[-1]["t"] - deltas[0]["t"]


def _last_spin_frame(deltas: list[dict[str, Any]]) -> str:
    return [text for d in deltas for _, text in d["changed"] if text.startswith("spin")][-1]


def test_an_unwatched_spinner_writes_two_deltas_a_second_and_its_last_frame(api: httpx.Client) -> None:
    tid = api.post("/v1/terminals", json={"command": [sys.executable, "-c", SPINNER]}).json()["id"]
    api.post(f"/v1/terminals/{tid}/input", json={"text": "\r"})
    done = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"exit": True}, "since": 0, "timeout_ms": 30000}).json()
    assert done["matched"]
    deltas = api.get(f"/v1/terminals/{tid}/deltas", params={"limit": 1000}).json()["deltas"]
    assert len(deltas) <= _spin_seconds(deltas) * 2 + 3  # at most 2 a second with nobody streaming, both edges
    assert _last_spin_frame(deltas) == "spin 299"


async def test_a_watched_spinner_streams_up_to_ten_deltas_a_second(daemon: Daemon, api: httpx.Client) -> None:
    tid = api.post("/v1/terminals", json={"command": [sys.executable, "-c", SPINNER]}).json()["id"]
    async with websockets.connect(_ws_url(daemon, f"/v1/terminals/{tid}/stream?mode=deltas")) as ws:
        assert json.loads(await ws.recv())["full"] is True
        api.post(f"/v1/terminals/{tid}/input", json={"text": "\r"})
        spinning: list[dict[str, Any]] = []
        while not spinning or _last_spin_frame(spinning) != "spin 299":
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if message["type"] == "delta" and any(text.startswith("spin") for _, text in message["changed"]):
                spinning.append(message)
    # at most ten a second on average (a late timer makes single gaps shorter); faster than the unwatched rate
    # judged by the gaps between the daemon's own delta times, not by how long the spin took (a starved daemon
    # reads the whole spin at once, and then sends few deltas)
    assert len(spinning) <= _spin_seconds(spinning) / MIN_INTERVAL_S + 3
    gaps = [b["t"] - a["t"] for a, b in itertools.pairwise(spinning)]
    assert gaps and min(gaps) < UNWATCHED_INTERVAL_S


async def test_websocket_needs_token_and_same_origin(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    path = f"/v1/terminals/{tid}/stream"
    with pytest.raises(InvalidStatus) as no_token:
        async with websockets.connect(f"ws://127.0.0.1:{daemon.port}{path}"):
            pass
    assert no_token.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as foreign:
        async with websockets.connect(_ws_url(daemon, path), origin="http://evil.example"):
            pass
    assert foreign.value.response.status_code == 403
    same = f"http://127.0.0.1:{daemon.port}"
    async with websockets.connect(_ws_url(daemon, path), origin=same) as ws:
        assert json.loads(await ws.recv())["type"] == "hydrate"


async def test_events_report_lifecycle(daemon: Daemon, api: httpx.Client) -> None:
    async with websockets.connect(_ws_url(daemon, "/v1/events")) as ws:  # subscribed once connected
        tid = api.post("/v1/terminals", json={"command": ["sleep", "30"]}).json()["id"]
        api.post(f"/v1/terminals/{tid}/resize", json={"cols": 50, "rows": 10})
        api.delete(f"/v1/terminals/{tid}")
        seen: list[dict[str, Any]] = []
        while not any(e["type"] == "terminal.deleted" for e in seen):
            seen.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    kinds = [e["type"] for e in seen if e.get("id") == tid]
    assert kinds == ["terminal.created", "terminal.resized", "terminal.exited", "terminal.deleted"]


async def test_events_subscribe_before_the_handshake_completes(tmp_path: Path) -> None:
    """An event published as soon as the client has the handshake (the client's next request can be served
    before the events route runs again) reaches the client: the route subscribes before it accepts. Driven
    through the app's ASGI interface, so the order is exact."""
    app = create_app(Settings(data_dir=tmp_path / "data", token=TOKEN))
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    inbox.put_nowait({"type": "websocket.connect"})
    received: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "websocket.accept":
            app.state.events.publish("terminal.created", id="t_first")
        elif message["type"] == "websocket.send":
            received.append(json.loads(message["text"]))
            inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})

    scope = {
        "type": "websocket", "asgi": {"version": "3.0"}, "scheme": "ws", "path": "/v1/events", "raw_path": b"/v1/events",
        "root_path": "", "query_string": b"", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765),
        "subprotocols": [], "headers": [(b"host", b"127.0.0.1:8765"), (b"authorization", f"Bearer {TOKEN}".encode())],
    }  # fmt: skip
    route = asyncio.create_task(app(scope, inbox.get, send))
    try:
        await asyncio.wait_for(asyncio.shield(route), 10)
    except TimeoutError:
        pass  # the event never came, so the client never hung up
    finally:
        route.cancel()
    assert [e["type"] for e in received] == ["terminal.created"]


def test_recording_v3_and_v2_play_back(api: httpx.Client, tmp_path: Path) -> None:
    tid = _shell(api)
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo recorded \u2713\r"}, "until": {"regex": "^recorded"}})
    api.post(f"/v1/terminals/{tid}/resize", json={"cols": 70, "rows": 20})
    api.post(f"/v1/terminals/{tid}/input", json={"text": "exit 2\r"})
    api.post(f"/v1/terminals/{tid}/wait", json={"until": {"exit": True}, "since": 0})

    v3 = api.get(f"/v1/terminals/{tid}/recording").text.splitlines()
    header = json.loads(v3[0])
    assert header["version"] == 3 and header["term"]["cols"] == 80 and header["term"]["rows"] == 24
    events = [json.loads(line) for line in v3[1:]]
    assert all(e[0] >= 0 for e in events)
    codes = [e[1] for e in events]
    assert "o" in codes and "i" in codes and next(e[1:] for e in events if e[1] == "r") == ["r", "70x20"]
    assert events[-1][1:] == ["x", "2"]
    output = "".join(e[2] for e in events if e[1] == "o")
    raw = api.get(f"/v1/terminals/{tid}/raw", params={"limit": 1 << 20}).json()
    assert output == base64.b64decode(raw["data_b64"]).decode()

    cast = tmp_path / "session.cast"
    cast.write_bytes(api.get(f"/v1/terminals/{tid}/recording", params={"version": 2}).content)
    played = subprocess.run([sys.executable, "-m", "asciinema", "cat", str(cast)], capture_output=True, timeout=60)
    assert played.returncode == 0, played.stderr
    assert played.stdout.decode() == output


async def test_blocks_become_events_and_recording_markers(daemon: Daemon, api: httpx.Client) -> None:
    async with websockets.connect(_ws_url(daemon, "/v1/events")) as ws:  # subscribed once connected
        tid = api.post("/v1/terminals", json={"cols": 80, "rows": 24}).json()["id"]  # the default shell
        for command in ("true", "false"):
            act = api.post(
                f"/v1/terminals/{tid}/act",
                json={"input": {"text": command + "\r"}, "until": {"block_end": True}, "timeout_ms": 20000, "detail": True},
            ).json()
            assert act["wait"]["reason"] == "block_end", act["wait"]
        seen: list[dict[str, Any]] = []
        while sum(e["type"] == "terminal.block_ended" for e in seen) < 2:
            seen.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    ended = [e["block"] for e in seen if e["type"] == "terminal.block_ended"]
    assert [(b["command"], b["exit_code"]) for b in ended] == [("true", 0), ("false", 1)]
    assert any(e["type"] == "terminal.block_started" and e["block"]["command"] == "false" for e in seen)
    events = [json.loads(line) for line in api.get(f"/v1/terminals/{tid}/recording").text.splitlines()[1:]]
    markers = [e[2] for e in events if e[1] == "m"]
    assert "block 2 ended (exit 1): false" in markers and "block 1 started: true" in markers


async def test_deltas_with_styles_carry_the_colours_of_their_rows(daemon: Daemon, api: httpx.Client) -> None:
    tid = _shell(api)
    url = _ws_url(daemon, f"/v1/terminals/{tid}/stream?mode=deltas&styles=true")
    async with websockets.connect(url) as ws:
        full = json.loads(await ws.recv())
        assert len(full["fgColors"]) == len(full["changed"]) and "colorPalette" in full
        api.post(f"/v1/terminals/{tid}/input", json={"text": "printf 'plain \\033[1;31mred-bold\\033[0m\\n'\r"})
        deadline = time.monotonic() + 10
        while True:
            delta = json.loads(await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic())))
            rows = [i for i, (_, text) in enumerate(delta["changed"]) if text == "plain red-bold"]
            if rows:
                break
    i = rows[0]
    red = [sym for sym, colour in delta["colorPalette"].items() if colour == "#cd0000"]
    assert delta["fgColors"][i] == [[6, 14, red[0]]]
    assert delta["styles"][i] == [[6, 14, "b"]] and delta["styleLegend"]["b"] == "bold"
