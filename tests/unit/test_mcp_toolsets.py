"""Which tools an MCP client gets: the toolset names of LOOKOUT_MCP_TOOLS and /mcp?tools=."""
from __future__ import annotations

import pytest

from lookout.clients.mcp.server import TOOLSETS, create_server
from lookout.clients.mcp.toolsets import NAMES, parse_toolsets


@pytest.mark.parametrize("value", [None, "", "all", " all "])
def test_nothing_or_all_is_every_toolset(value: str | None) -> None:
    assert parse_toolsets(value) == NAMES == tuple(TOOLSETS)


def test_names_keep_one_order_and_ignore_blanks_and_repeats() -> None:
    assert parse_toolsets("context, terminal,,terminal") == ("terminal", "context")


@pytest.mark.parametrize("value", ["terminals", "terminal,web", ","])
def test_an_unknown_name_is_refused_with_the_valid_ones(value: str) -> None:
    with pytest.raises(ValueError, match="terminal, device, page, context"):
        parse_toolsets(value)


async def test_a_server_carries_only_the_chosen_tools_and_their_guides() -> None:
    server = create_server(toolsets=("terminal",))
    names = {tool.name for tool in await server.list_tools()}
    assert names == {tool.__name__ for tool, _ in TOOLSETS["terminal"]}
    assert "terminal_act" in (server.instructions or "") and "browser_open" not in (server.instructions or "")
