"""Over MCP (the SDK's client at the daemon's `/mcp`, the daemon a subprocess): `browser_snapshot` shows the
controls of a closed shadow root with `s` refs, and `browser_action` fills and clicks them by those refs."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Daemon
from tests.support.mcp_client import call, over_http, tool_text
from tests.support.pages import CLOSED_CARD, ref_of
from tests.support.site import serve_directory


async def test_browser_snapshot_and_action_reach_a_closed_shadow_root(daemon: Daemon, tmp_path: Path) -> None:
    (tmp_path / "card.html").write_text(CLOSED_CARD)
    with serve_directory(tmp_path) as site:
        async with over_http(daemon.url, daemon.token, tools="page") as session:
            page = await call(session, "browser_open", url=f"{site}/card.html")
            text = tool_text(await session.call_tool("browser_snapshot", {"page_id": page["id"]}))
            email, save = ref_of(text, '- textbox "Email"'), ref_of(text, '- button "Save"')
            assert email.startswith("s") and save.startswith("s"), text
            await call(session, "browser_action", page_id=page["id"], action="fill", ref=email, text="cy@example.org")
            await call(session, "browser_action", page_id=page["id"], action="click", ref=save)
            after = tool_text(await session.call_tool("browser_snapshot", {"page_id": page["id"]}))
            assert "Saved cy@example.org" in after, after
