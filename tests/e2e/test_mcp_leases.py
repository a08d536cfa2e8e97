"""Leases through the real MCP client (the daemon's `/mcp`, the SDK's HTTP client): the `hold` tool takes a
terminal and a page for the agent, another hand's input is then refused naming it, the agent's own goes in, and
seconds=0 lets go; a lease another hand holds is an error in the agent's tool text, naming that hand."""
from __future__ import annotations

import httpx

from tests.conftest import Daemon
from tests.support.mcp_client import HTTP_CLIENT_NAME, call, over_http, tool_text

B = {"X-Lookout-Agent": "agent-B"}


async def test_hold_over_mcp_is_refused_to_others_and_honoured_for_its_holder(daemon: Daemon, api: httpx.Client) -> None:
    async with over_http(daemon.url, daemon.token) as session:
        tid = (await call(session, "terminal_open", command=["bash", "--norc"], cols=80, rows=12))["id"]
        held = await call(session, "hold", id=tid, seconds=120)
        assert held["lease"]["holder"] == HTTP_CLIENT_NAME
        refused = api.post(f"/v1/terminals/{tid}/input", json={"text": "echo B\r"}, headers=B)
        assert refused.status_code == 409 and HTTP_CLIENT_NAME in refused.json()["error"]["message"]
        step = await call(session, "terminal_act", terminal_id=tid, input={"text": "echo mine-$((6*7))", "keys": ["Enter"]},
                          until={"regex": "^mine-42"})  # fmt: skip
        assert step["ended"] == "regex"
        assert (await call(session, "hold", id=tid, seconds=0))["let_go"]["holder"] == HTTP_CLIENT_NAME
        assert api.post(f"/v1/terminals/{tid}/input", json={"text": "echo B\r"}, headers=B).status_code == 200

        api.post(f"/v1/terminals/{tid}/lease", json={"duration_s": 120}, headers=B).raise_for_status()
        blocked = await session.call_tool("terminal_act", {"terminal_id": tid, "input": {"text": "echo x\r"}})
        assert blocked.is_error and "409" in tool_text(blocked) and "'agent-B'" in tool_text(blocked)
        taken = await session.call_tool("hold", {"id": tid, "seconds": 60})
        assert taken.is_error and "only 'agent-B' renews" in tool_text(taken)
        bad = await session.call_tool("hold", {"id": "t_nope", "seconds": 60})
        assert bad.is_error and "404" in tool_text(bad)


async def test_hold_takes_a_page_by_its_id(daemon: Daemon, api: httpx.Client) -> None:
    page = api.post("/v1/pages", json={"url": "about:blank"}).json()
    async with over_http(daemon.url, daemon.token) as session:
        await call(session, "hold", id=page["id"], seconds=60)
        assert api.get(f"/v1/pages/{page['id']}").json()["lease"]["holder"] == HTTP_CLIENT_NAME
        reload = api.post(f"/v1/pages/{page['id']}/action", json={"action": "reload"}, headers=B)
        assert reload.status_code == 409 and reload.json()["error"]["code"] == "leased"
