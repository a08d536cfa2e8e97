"""The MCP shim end to end: the SDK's own client talks to `lookout-mcp` over stdio, which talks to a real
daemon subprocess (or to a stub HTTP server where the test looks at the requests the shim sends)."""
from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from PIL import Image

from tests.conftest import Daemon, free_port
from tests.support.mcp_client import (
    BROWSER_TOOLS,
    CLIENT_NAME,
    CONTEXT_TOOLS,
    DEVICE_TOOLS,
    SHIM,
    TERMINAL_TOOLS,
    call,
    shim,
    tool_text,
)
from tests.support.screens import LOGIN_UI


async def test_lists_the_tools_with_their_schemas(daemon: Daemon) -> None:
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == TERMINAL_TOOLS | DEVICE_TOOLS | BROWSER_TOOLS | CONTEXT_TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 10, tool.name
        assert not tool.description.startswith(" ") and "\n    " not in tool.description, "dedented"
    act = tools["terminal_act"].input_schema
    assert act["required"] == ["terminal_id"]
    assert set(act["properties"]) == {"terminal_id", "input", "until", "since", "timeout_ms", "screen", "detail"}
    assert set(act["$defs"]) == {"InputStep", "Until", "ScreenOptions"}, "each model once"
    assert {"block_end", "match", "echo"} <= set(act["$defs"]["Until"]["properties"])
    assert "around_cursor" in act["$defs"]["ScreenOptions"]["properties"]
    assert tools["terminal_read"].input_schema["properties"]["what"]["enum"] == ["blocks", "raw", "deltas"]
    assert tools["terminal_read"].annotations.read_only_hint is True
    assert tools["terminal_close"].annotations.destructive_hint is True


async def test_open_act_read_and_close_a_terminal(daemon: Daemon) -> None:
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        opened = await call(session, "terminal_open", command=["bash"], cols=80, rows=12, name="mcp")
        tid = opened["id"]
        assert opened["status"] == "running" and opened["cols"] == 80

        step = await call(
            session, "terminal_act", terminal_id=tid, input={"text": "echo hi-$((40+2))", "keys": ["Enter"]},
            until={"block_end": True},
        )
        assert step["ended"] == "block_end" and step["exit_code"] == 0 and step["state"] == "idle"
        assert "hi-42" in step["screen"]["text"]
        assert "" not in step["screen"]["text"], "compact by default: no empty rows"

        # no input, until or since: the screen alone (GET /screen: its full answer, no wait fields)
        screen = await call(session, "terminal_act", terminal_id=tid, screen={"around_cursor": 0})
        assert screen["viewport"]["mode"] == "aroundCursor" and len(screen["text"]) == 1 and "ended" not in screen
        text_view = await session.call_tool("terminal_act", {"terminal_id": tid, "screen": {"format": "text", "compact": True}})
        assert not text_view.is_error and tool_text(text_view).startswith("# screen 80x12 ")
        assert re.search(r"^\d+: hi-42$", tool_text(text_view), re.MULTILINE), "compact rows keep their numbers"
        block = await call(session, "terminal_read", terminal_id=tid, n=1)
        assert block["output"]["text"] == "hi-42"
        listed = await call(session, "terminal_read", terminal_id=tid)
        assert [b["command"] for b in listed["blocks"]] == ["echo hi-$((40+2))"]
        raw = await call(session, "terminal_read", terminal_id=tid, what="raw")
        assert "hi-42\r\n" in raw["text"] and raw["next_offset"] == raw["size"]
        tail = await call(session, "terminal_read", terminal_id=tid, what="raw", since=raw["size"] - 4, limit=2)
        assert tail["offset"] == raw["size"] - 4 and tail["next_offset"] == raw["size"] - 2
        deltas = await call(session, "terminal_read", terminal_id=tid, what="deltas")
        assert any(text == "hi-42" for d in deltas["deltas"] for _, text in d["changed"])
        mixed = await session.call_tool("terminal_read", {"terminal_id": tid, "what": "raw", "n": 1})
        assert mixed.is_error and "n and max_tokens read a block" in tool_text(mixed)
        both = await session.call_tool("terminal_read", {"terminal_id": tid, "n": 1, "limit": 5})
        assert both.is_error and "leave them out with n" in tool_text(both)

        # input without a wait, then a wait resumed from the cursor that answer gave
        sent = await call(session, "terminal_act", terminal_id=tid, input=[{"text": "sleep 1; exit 7"}, {"keys": ["Enter"]}],
                          timeout_ms=0)  # fmt: skip
        assert sent["ended"] == "timeout" and isinstance(sent["cursor"], int)
        waited = await call(session, "terminal_act", terminal_id=tid, until={"exit": True}, since=sent["cursor"])
        assert waited["ended"] == "exit" and waited["exit_code"] == 7
        assert tid in [t["id"] for t in (await call(session, "terminal_list"))["terminals"]]
        assert tid in [t["id"] for t in (await call(session, "terminal_list", status=["exited"]))["terminals"]]
        assert tid not in [t["id"] for t in (await call(session, "terminal_list", status=["running"]))["terminals"]]
        closed = await call(session, "terminal_close", terminal_id=tid, purge=True)
        assert closed["purged"] is True and closed["status"] == "exited"


async def test_context_tools_give_the_agents_own_history_and_fetch_ranges_back(daemon: Daemon) -> None:
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        tid = (await call(session, "terminal_open", command=["bash"], cols=80, rows=12))["id"]
        for line in ("echo first-$((1+1))", "ls /nowhere-at-all", "echo last-$((2+3))"):
            await call(session, "terminal_act", terminal_id=tid, input={"text": line, "keys": ["Enter"]}, until={"block_end": True})
        history = tool_text(await session.call_tool("context_history", {"budget": 2000}))
        assert history.startswith("# History: ") and "of 2000 tokens" in history
        assert f"[assistant] [#1 terminal:{tid}] typed `echo first-$((1+1))`" in history
        assert "`ls /nowhere-at-all` exited 2" in history and "last-5" in history
        small = tool_text(await session.call_tool("context_history", {"budget": 150}))
        assert "elided: 1-" in small and "last-5" in small
        assert "# History: 0 of" in tool_text(await session.call_tool("context_history", {"budget": 2000, "resource": "page:x"}))
        extract = tool_text(await session.call_tool("context_extract", {"from_frame": 1, "to_frame": 4}))
        assert extract.startswith(f"[#1 terminal:{tid}] typed") and extract.endswith("frames: 4")


async def test_daemon_errors_are_tool_errors_and_a_timeout_is_not(daemon: Daemon) -> None:
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        missing = await session.call_tool("terminal_act", {"terminal_id": "t_nope"})
        assert missing.is_error and "no terminal 't_nope'" in tool_text(missing) and "404" in tool_text(missing)

        tid = (await call(session, "terminal_open", command=["bash"]))["id"]
        bad_key = await session.call_tool("terminal_act", {"terminal_id": tid, "input": {"keys": ["Bogus"]}})
        assert bad_key.is_error and "unknown key 'Bogus'" in tool_text(bad_key)
        too_long = await session.call_tool(
            "terminal_act", {"terminal_id": tid, "until": {"exit": True}, "timeout_ms": 60_000}
        )
        assert too_long.is_error and "timeout_ms" in tool_text(too_long)
        both = await session.call_tool("terminal_act", {"terminal_id": tid, "input": {"text": "x"}, "since": 0})
        assert both.is_error and "since resumes a wait" in tool_text(both) and "400" in tool_text(both)

        timed_out = await call(
            session, "terminal_act", terminal_id=tid, until={"regex": "never-printed"}, timeout_ms=300
        )
        assert timed_out["ended"] == "timeout" and isinstance(timed_out["cursor"], int)


async def test_a_daemon_that_is_not_running_gets_one_clear_message(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with shim(LOOKOUT_URL=url, LOOKOUT_DATA_DIR=str(tmp_path)) as session:
        result = await session.call_tool("terminal_list", {})
    assert result.is_error
    message = tool_text(result)
    assert f"lookout is not running at {url}" in message and "lookout serve" in message
    assert "Traceback" not in message


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request with `status` and the body below, and keeps the headers it got."""

    seen: ClassVar[list[dict[str, str]]] = []
    ports: ClassVar[list[int]] = []
    status = 200
    protocol_version = "HTTP/1.1"  # keeps connections open, as uvicorn does

    def do_GET(self) -> None:
        type(self).seen.append(dict(self.headers))
        type(self).ports.append(self.client_address[1])
        body = b'{"terminals": []}' if self.status == 200 else b'{"error": {"code": "unauthorized", "message": "no"}}'
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Recorder", (_Recorder,), {"seen": [], "ports": [], "status": 200})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


async def test_sends_the_agent_name_and_the_token_from_the_data_dir(
    recorder: tuple[str, type[_Recorder]], tmp_path: Path
) -> None:
    url, handler = recorder
    (tmp_path / "token").write_text("token-from-file\n")
    (tmp_path / "token").chmod(0o600)  # as `lookout serve` writes it (one others may read is refused)
    async with shim(LOOKOUT_URL=url, LOOKOUT_DATA_DIR=str(tmp_path)) as session:
        assert await call(session, "terminal_list") == {"terminals": []}
    async with shim(LOOKOUT_URL=url, LOOKOUT_TOKEN="from-env", LOOKOUT_AGENT="planner") as session:
        await call(session, "terminal_list")
    first, second = handler.seen
    assert first["Authorization"] == "Bearer token-from-file" and first["X-Lookout-Agent"] == CLIENT_NAME
    assert second["Authorization"] == "Bearer from-env" and second["X-Lookout-Agent"] == "planner"


async def test_the_shim_keeps_one_connection_and_reads_the_token_file_again_once_it_changed(
    recorder: tuple[str, type[_Recorder]], tmp_path: Path
) -> None:
    url, handler = recorder
    token = tmp_path / "token"
    token.write_text("first-token-0123456789\n")
    token.chmod(0o600)
    async with shim(LOOKOUT_URL=url, LOOKOUT_DATA_DIR=str(tmp_path)) as session:
        for _ in range(5):
            await call(session, "terminal_list")
        token.write_text("rotated-token-0123456789-more\n")  # a daemon that made a new token
        await call(session, "terminal_list")
    assert len(set(handler.ports)) == 1, f"calls went over {len(set(handler.ports))} connections"
    assert [h["Authorization"] for h in handler.seen] == ["Bearer first-token-0123456789"] * 5 + [
        "Bearer rotated-token-0123456789-more"
    ]


async def test_a_refused_token_says_where_the_token_came_from(
    recorder: tuple[str, type[_Recorder]], tmp_path: Path
) -> None:
    url, handler = recorder
    handler.status = 401
    async with shim(LOOKOUT_URL=url, LOOKOUT_DATA_DIR=str(tmp_path)) as session:
        result = await session.call_tool("terminal_list", {})
    assert result.is_error
    assert f"no token was found in the token file {tmp_path / 'token'}" in tool_text(result)
    assert "LOOKOUT_TOKEN" in tool_text(result) and "Authorization" not in handler.seen[0]


async def test_device_tools_return_the_screenshot_as_an_image(
    tmp_path: Path, adb_server: Any, make_device: Any
) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_ui(LOGIN_UI)
    daemon = Daemon(tmp_path / "data", LOOKOUT_ADB_PORT=str(adb_server.port)).start()
    try:
        async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
            listed = await call(session, "device_list")
            assert [(d["serial"], d["width"], d["height"]) for d in listed["devices"]] == [(serial, 1080, 2400)]

            shot = await session.call_tool("device_screenshot", {"serial": serial, "marks": True})
            assert not shot.is_error
            image, text = shot.content
            assert image.type == "image" and image.mime_type == "image/jpeg"
            assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (450, 1000)
            described = json.loads(text.text)
            assert described["image"] == {"width": 450, "height": 1000} and described["tokens"] == 600
            assert "image_b64" not in described
            (listed,) = described["ui"]["elements"]  # the screenshot reads the UI too, by default
            assert listed["text"] == "Log in" and listed["center"] == [225, 656]

            ui = await call(session, "device_ui", serial=serial, obs_id=described["obs_id"])
            (button,) = ui["elements"]
            assert button["text"] == "Log in" and button["center"] == [225, 656]
            tapped = await call(session, "device_tap", serial=serial, element=button["index"],
                                obs_id=described["obs_id"])  # fmt: skip
            assert tapped["device_point"] == [540, 1575]
            await call(session, "device_type", serial=serial, text="hello world")
            await call(session, "device_key", serial=serial, key="BACK")
            assert fake.inputs() == [["tap", "540", "1575"], ["text", "hello%sworld"], ["keyevent", "4"]]
            scripted = await session.call_tool("device_script", {"serial": serial, "steps": [
                {"action": "key", "key": "HOME"}, {"action": "tap", "x": 1, "y": 1, "obs_id": "o_0000000000"}]})
            assert scripted.is_error and "step 1 (tap): no observation 'o_0000000000'" in tool_text(scripted)
            assert "no step was run" in tool_text(scripted) and fake.inputs()[-1] == ["keyevent", "4"]  # checked first

            refused = await session.call_tool("device_type", {"serial": serial, "text": "naïve"})
            assert refused.is_error and "printable ASCII only" in tool_text(refused)
    finally:
        daemon.stop()


async def test_browser_tools_open_and_snapshot_a_page(daemon: Daemon) -> None:
    html = "<title>Hello</title><h1>Welcome</h1><button>Press me</button>"
    url = "data:text/html," + html.replace(" ", "%20")
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        page = await call(session, "browser_open", url=url)
        assert page["title"] == "Hello"
        result = await session.call_tool("browser_snapshot", {"page_id": page["id"], "max_tokens": 300})
        text = tool_text(result)
        assert text.startswith("# Page: Hello") and '- button "Press me" [ref=e' in text
        assert re.search(r"^# obs_id: o_[0-9a-f]+$", text, re.MULTILINE)
        assert [p["id"] for p in (await call(session, "browser_pages"))["pages"]] == [page["id"]]
        ref = text.split('- button "Press me" [ref=')[1].split("]")[0]
        acted = await call(session, "browser_action", page_id=page["id"], action="click", ref=ref)
        assert acted["ok"] is True and acted["title"] == "Hello"
        scripted = await call(session, "browser_script", page_id=page["id"],
                              steps=[{"action": "click", "ref": ref}, {"action": "snapshot"}])  # fmt: skip
        assert [r["ok"] for r in scripted["results"]] == [True, True] and "Press me" in scripted["snapshot"]["text"]
        stale = await session.call_tool("browser_action", {"page_id": page["id"], "action": "click", "ref": "e999"})
        assert stale.is_error and "snapshot again" in tool_text(stale)
        shot = await session.call_tool("browser_screenshot", {"page_id": page["id"]})
        image, described = shot.content
        assert image.type == "image" and Image.open(io.BytesIO(base64.b64decode(image.data))).size == (1000, 562)
        assert json.loads(described.text)["scale_factor"] == 1.28


async def test_lookout_mcp_tools_chooses_the_toolsets(daemon: Daemon) -> None:
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token, LOOKOUT_MCP_TOOLS="terminal") as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == TERMINAL_TOOLS
    env = {**os.environ, "LOOKOUT_URL": daemon.url, "LOOKOUT_TOKEN": daemon.token, "LOOKOUT_MCP_TOOLS": "terminal,web"}
    refused = subprocess.run([str(SHIM)], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "LOOKOUT_MCP_TOOLS" in refused.stderr and "web" in refused.stderr


async def test_the_shim_reaches_a_restarted_daemon_and_says_when_a_call_was_cut(daemon: Daemon) -> None:
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        tid = (await call(session, "terminal_open", command=["bash"], cols=80, rows=12))["id"]
        act = {"terminal_id": tid, "input": {"text": "echo in-$((6*7))\r"}, "until": {"regex": "never-shown"},
               "timeout_ms": 30_000}  # fmt: skip
        waiting = asyncio.create_task(session.call_tool("terminal_act", act))
        with daemon.client() as api:  # its input reached the shell: the daemon is in the act's wait
            body = {"until": {"regex": "^in-42"}, "since": 0, "timeout_ms": 30_000}
            seen = await asyncio.to_thread(api.post, f"/v1/terminals/{tid}/wait", json=body)
        assert seen.json()["matched"], seen.text
        daemon.stop(signal.SIGKILL)  # the wait is cut
        cut = await asyncio.wait_for(waiting, 30)
        assert cut.is_error and "went away while it served" in tool_text(cut), tool_text(cut)
        daemon.start()
        listed = await call(session, "terminal_list")  # no word of the restart: this call was not cut
        assert [t["id"] for t in listed["terminals"]] == [tid] and listed["terminals"][0]["status"] == "running"
