"""A screen read names the inputs other hands sent since the caller's own last input (issue 44): two HTTP clients
naming distinct agents on one real bash, each order, and the MCP terminal tool's text, which shows that JSON."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Daemon
from tests.support.hands import ORDERS, act_line, bash_terminal, hands
from tests.support.http import ok_json
from tests.support.mcp_client import call, over_http, tool_text


def _screen(api: httpx.Client, tid: str) -> dict[str, Any]:
    return ok_json(api.get(f"/v1/terminals/{tid}/screen", params={"compact": True}))


@pytest.mark.parametrize(("first", "second"), ORDERS)
def test_a_screen_says_which_other_hands_wrote_since_the_callers_last_input(
    daemon: Daemon, tmp_path: Path, first: str, second: str
) -> None:
    with hands(daemon, first, second, "reader") as h:
        tid = bash_terminal(h[first], tmp_path / "home")
        assert act_line(h[first], tid, "echo FIRST-$((1+1))")["exit_code"] == 0
        alone = _screen(h[first], tid)
        assert "FIRST-2" in str(alone) and "other_hands" not in alone and "note" not in alone

        assert act_line(h[second], tid, "echo SECOND-$((2+2))")["exit_code"] == 0
        seen = _screen(h[first], tid)
        assert [i["hand"] for i in seen["other_hands"]] == [second]
        assert "SECOND-$((2+2))" in seen["other_hands"][0]["text"] and seen["other_hands"][0]["raw_offset"] > 0
        assert seen["note"].startswith(f"another hand wrote to this terminal since your last input: {second} ")
        assert "other_hands" not in _screen(h[second], tid)  # nobody wrote after the second hand's input
        assert "other_hands" not in _screen(h["reader"], tid)  # a hand that sent nothing: nothing is its own

        act_line(h[first], tid, "echo AGAIN")
        assert "other_hands" not in _screen(h[first], tid)
        assert [i["hand"] for i in _screen(h[second], tid)["other_hands"]] == [first]


async def test_the_mcp_screen_text_carries_the_note(daemon: Daemon) -> None:
    with hands(daemon, "agent-B") as h:
        async with over_http(daemon.url, daemon.token) as session:
            tid = (await call(session, "terminal_open", command=["bash", "--norc"], cols=80, rows=12))["id"]
            mine = {"terminal_id": tid, "input": {"text": "echo mine-$((6*7))", "keys": ["Enter"]},
                    "until": {"regex": "^mine-42"}}  # fmt: skip
            assert not (await session.call_tool("terminal_act", mine)).is_error
            quiet = tool_text(await session.call_tool("terminal_act", {"terminal_id": tid}))
            assert not quiet.startswith("NOTE:") and "other_hands" not in quiet
            ok_json(h["agent-B"].post(f"/v1/terminals/{tid}/input", json={"text": "echo from-B\r"}))
            text = tool_text(await session.call_tool("terminal_act", {"terminal_id": tid}))
    first, rest = text.split("\n", 1)
    assert first.startswith("NOTE: another hand wrote to this terminal since your last input: agent-B (last: "), first
    assert "echo from-B" in first and '"other_hands"' in rest

