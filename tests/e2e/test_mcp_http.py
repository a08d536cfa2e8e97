"""MCP over Streamable HTTP at the daemon's `/mcp`: the SDK's own HTTP client against a daemon subprocess, with
nothing but the URL and the token, as `claude mcp add --transport http` configures it."""
from __future__ import annotations

import signal

import httpx

from tests.conftest import Daemon
from tests.support.mcp_client import (
    BROWSER_TOOLS,
    CONTEXT_TOOLS,
    DEVICE_TOOLS,
    HTTP_CLIENT_NAME,
    TERMINAL_TOOLS,
    call,
    over_http,
    shim,
)


async def test_the_same_tools_as_the_stdio_shim_with_the_same_schemas(daemon: Daemon) -> None:
    async with over_http(daemon.url, daemon.token) as session:
        over_the_wire = {tool.name: tool for tool in (await session.list_tools()).tools}
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        stdio = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(over_the_wire) == TERMINAL_TOOLS | DEVICE_TOOLS | BROWSER_TOOLS | CONTEXT_TOOLS == set(stdio)
    for name, tool in over_the_wire.items():
        assert tool.input_schema == stdio[name].input_schema and tool.description == stdio[name].description


async def test_a_terminal_driven_over_http_is_recorded_under_the_clients_name(daemon: Daemon) -> None:
    async with over_http(daemon.url, daemon.token) as session:
        tid = (await call(session, "terminal_open", command=["bash"], cols=80, rows=12))["id"]
        step = await call(session, "terminal_act", terminal_id=tid, input={"text": "echo hi-$((40+2))", "keys": ["Enter"]},
                           until={"block_end": True})  # fmt: skip
        assert step["ended"] == "block_end" and "hi-42" in step["screen"]["text"]
        assert (await call(session, "terminal_read", terminal_id=tid, n=1))["output"]["text"] == "hi-42"
        assert [t["id"] for t in (await call(session, "terminal_list"))["terminals"]] == [tid]  # within its 4000 tokens
        cut = await call(session, "terminal_list", max_tokens=100)  # less than the terminal's facts
        assert cut["terminals"] == [] and cut["more"]["count"] == 1 and cut["more"]["statuses"] == {"running": 1}
        missing = await session.call_tool("terminal_act", {"terminal_id": "t_nope"})
        assert missing.is_error and "404" in missing.content[0].text
    with daemon.client() as api:
        frames = api.get("/v1/timeline/frames", params={"resource": f"terminal:{tid}"}).json()["frames"]
    assert frames and {frame["agent"] for frame in frames} == {HTTP_CLIENT_NAME}


def test_the_endpoint_needs_the_token(daemon: Daemon) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}  # fmt: skip
    headers = {"Accept": "application/json, text/event-stream"}
    for given in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}):
        answer = httpx.post(f"{daemon.url}/mcp", json=initialize, headers={**headers, **given}, timeout=30)
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["code"] == "unauthorized"


async def test_a_client_connected_before_a_restart_keeps_calling_tools_after_it(daemon: Daemon) -> None:
    async with over_http(daemon.url, daemon.token) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} >= {"terminal_open", "terminal_act"}
        tid = (await call(session, "terminal_open", command=["bash"], cols=80, rows=12))["id"]
        await call(session, "terminal_act", terminal_id=tid, input={"text": "K=still-here", "keys": ["Enter"]},
                    until={"stable_ms": 200})  # fmt: skip
        daemon.stop(signal.SIGKILL)
        daemon.start()  # the same port and data dir
        step = await call(session, "terminal_act", terminal_id=tid, input={"text": "echo $K", "keys": ["Enter"]},
                           until={"regex": "^still-here"})  # fmt: skip
        assert "still-here" in str(step), step
    with daemon.client() as api:
        frames = api.get("/v1/timeline/frames", params={"resource": f"terminal:{tid}"}).json()["frames"]
    assert {f["agent"] for f in frames if f["kind"] == "action"} == {HTTP_CLIENT_NAME}


async def test_the_daemon_stops_cleanly_while_a_client_holds_a_session(daemon: Daemon) -> None:
    async with over_http(daemon.url, daemon.token) as session:
        assert (await call(session, "terminal_list"))["terminals"] == []
        code = daemon.stop()
        log = daemon.log.read_text()
        assert code in (0, -signal.SIGTERM) and "Application shutdown complete" in log, (code, log[-2000:])


async def test_a_client_chooses_its_toolsets(daemon: Daemon) -> None:
    async with over_http(daemon.url, daemon.token, tools="page,context") as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert names == BROWSER_TOOLS | CONTEXT_TOOLS
    headers = {"Authorization": f"Bearer {daemon.token}", "Accept": "application/json, text/event-stream"}
    refused = httpx.post(f"{daemon.url}/mcp?tools=terminal,bogus", json={}, headers=headers, timeout=30)
    assert refused.status_code == 400 and "bogus" in refused.json()["error"]["message"]
