"""Over MCP (the SDK's client at the daemon's `/mcp`, the daemon a subprocess): `browser_snapshot` shows a page
as it is when answered, for every kind of change a page makes by itself that no document mutation observer
sees (tests/support/self_changing.py), after three snapshots of the page before it."""

from __future__ import annotations

import asyncio

from tests.conftest import Daemon
from tests.support.mcp_client import call, over_http, tool_text
from tests.support.self_changing import KINDS, self_changing_site, shows


async def test_browser_snapshot_shows_every_change_a_page_makes_by_itself(daemon: Daemon) -> None:
    with self_changing_site() as site:
        async with over_http(daemon.url, daemon.token, tools="page") as session:
            for kind, spec in KINDS.items():
                page = await call(session, "browser_open", url=f"{site.url}/page/{kind}.html")
                args = {"page_id": page["id"], "viewport_only": spec.viewport_only}
                for _ in range(3):
                    text = tool_text(await session.call_tool("browser_snapshot", args))
                    assert shows(text, spec, changed=False), (kind, text)
                site.release(kind)
                assert await asyncio.to_thread(site.applied, kind), kind
                text = tool_text(await session.call_tool("browser_snapshot", args))
                assert shows(text, spec, changed=True), (kind, text)
                await call(session, "browser_close", page_id=page["id"])
