"""A listing of terminals within a token budget (`GET /v1/terminals?max_tokens=N`, MCP `terminal_list`).

A terminal's facts cost about 150 tokens, so a fleet's listing grows without bound (600 terminals: 90,000).
Within a budget the running terminals come first, then the others newest first, each whole; the listing keeps
its order (oldest first), and `more` says how many were left out, of which statuses, and how to see them.
Nothing is left out without `more` saying so. Pure functions; counts are o200k tokens of the JSON as the API
sends it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from lookout.core.budget import fit, within
from lookout.core.storage import dumps
from lookout.core.tokens import count_tokens


def fitted(terminals: list[dict[str, Any]], max_tokens: int | None) -> dict[str, Any]:
    """`{"terminals": [...]}` of `terminals` (facts as listed, oldest first), all of them without `max_tokens`,
    else as many as fit it (running ones first, then the newest), with `more` when any was left out."""
    if max_tokens is None:
        return {"terminals": terminals}
    budget = max_tokens
    ranked = sorted(range(len(terminals)), key=lambda i: (terminals[i].get("status") != "running", -i))

    def measure(k: int) -> tuple[dict[str, Any], int]:
        kept = sorted(ranked[:k])
        left = Counter(str(terminals[i].get("status")) for i in ranked[k:])
        body: dict[str, Any] = {"terminals": [terminals[i] for i in kept]}
        if left:
            body["more"] = _more(left, budget)
        return body, _tokens(body)

    def estimate() -> int:
        return within((_tokens(terminals[i]) + 1 for i in ranked), budget - measure(0)[1])

    best = fit(measure, budget, len(terminals), estimate)
    value, k = best.value, best.choice
    while k < len(terminals) and (grown := measure(k + 1))[1] <= budget:  # the estimate may fall short by one or two
        value, k = grown[0], k + 1
    return value


def _more(left: Counter[str], max_tokens: int) -> dict[str, Any]:
    count = sum(left.values())
    return {
        "count": count,
        "statuses": dict(sorted(left.items())),
        "note": f"{count} more terminal{'s' if count > 1 else ''} left out to keep this listing within max_tokens="
        f"{max_tokens} (running ones first, then the newest): ask with a larger max_tokens, or only some statuses "
        "(status=...), or one terminal by its id",
    }


def _tokens(value: Any) -> int:
    return count_tokens(dumps(value).decode())
