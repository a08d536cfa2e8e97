"""context_history's text: the daemon's REST handles for elided ranges become context_extract calls."""
from __future__ import annotations

from typing import Any

from lookout.clients.mcp.context_tools import history_text


def _answer(*contents: str) -> dict[str, Any]:
    meta = {"total_tokens": 40, "budget": 100, "last_seq": 9, "elided": [{"from": 1, "to": 4}]}
    return {"metadata": meta, "messages": [{"role": "user", "content": c} for c in contents]}


def test_handles_name_the_tool_with_the_same_range_resource_and_agents() -> None:
    text = history_text(_answer(
        "frames 1-4 elided: 3 commands; GET /v1/timeline/extract?from=1&to=4&agent=planner",
        "frame 5 elided: 1 observation; GET /v1/timeline/extract?from=5&to=5&agent=a&resource=terminal%3At_1",
        "frames 6-8 summarised (local); GET /v1/timeline/extract?from=6&to=8\n- terminal:t_1: 2 commands",
    ))  # fmt: skip
    assert "/v1/timeline" not in text
    assert "3 commands; context_extract(from_frame=1, to_frame=4)\n" in text + "\n"
    assert 'context_extract(from_frame=5, to_frame=5, resource="terminal:t_1")' in text
    assert "summarised (local); context_extract(from_frame=6, to_frame=8, everyone=true)\n- terminal:t_1" in text
    assert text.startswith("# History: 40 of 100 tokens, up to frame 9; elided: 1-4")
