"""The line an answer's `other_hands` field becomes in an MCP tool's text (lookout.clients.mcp.lease_tools.with_notice)."""
from __future__ import annotations

import json

from lookout.clients.mcp.lease_tools import with_notice


def test_other_hands_are_one_line_before_the_answer() -> None:
    answer = json.dumps({"ended": "block_end", "other_hands": [
        {"hand": "web-ui", "at": 1.0, "raw_offset": 10, "text": "ls\r"},
        {"hand": "agent-B", "at": 2.0, "raw_offset": 20, "text": "echo B-HI\r"}]})  # fmt: skip
    first, rest = with_notice(answer).split("\n", 1)
    assert first == "NOTE: another hand wrote to this terminal while your call ran: agent-B, web-ui (last: 'echo B-HI\\r')"
    assert rest == answer


def test_an_answer_without_other_hands_is_left_as_it_is() -> None:
    for answer in ('{"ended": "regex"}', '{"other_hands": []}', 'text "other_hands" not JSON', '["other_hands"]'):
        assert with_notice(answer) == answer
