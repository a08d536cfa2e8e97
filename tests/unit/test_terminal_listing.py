"""lookout.terminal.listing: a listing within a token budget keeps the running terminals, then the newest, whole,
in the listing's order, says what it left out, and is the largest such listing within the budget."""

from __future__ import annotations

from typing import Any

from lookout.core.storage import dumps
from lookout.core.tokens import count_tokens
from lookout.terminal.listing import fitted


def _terminals(statuses: str) -> list[dict[str, Any]]:
    """One terminal a letter, oldest first: r running, e exited, l lost."""
    names = {"r": "running", "e": "exited", "l": "lost"}
    return [
        {"id": f"t{n:03d}", "status": names[s], "command": ["sh", "-c", f"job {n} " * 8]}
        for n, s in enumerate(statuses)
    ]


def _tokens(body: dict[str, Any]) -> int:
    return count_tokens(dumps(body).decode())


def test_without_a_budget_every_terminal_is_listed() -> None:
    terminals = _terminals("eerle")
    assert fitted(terminals, None) == {"terminals": terminals}


def test_a_budget_keeps_the_running_then_the_newest_in_order_and_says_what_it_left() -> None:
    terminals = _terminals("eereeeleeree")
    one = _tokens(terminals[0])
    for budget in (2 * one + 100, 4 * one + 100, 6 * one + 100, 9 * one + 100):
        body = fitted(terminals, budget)
        ids = [t["id"] for t in body["terminals"]]
        assert _tokens(body) <= budget
        assert {"t002", "t009"} <= set(ids)  # both running ones
        assert ids == sorted(ids)  # the listing's order: oldest first
        others = [i for i in ids if i not in ("t002", "t009")]
        non_running = [f"t{n:03d}" for n in range(12) if n not in (2, 9)]
        assert others == non_running[len(non_running) - len(others) :]  # the newest
        left = [t for t in terminals if t["id"] not in ids]
        assert body["more"]["count"] == len(left) > 0
        assert body["more"]["statuses"] == {s: sum(t["status"] == s for t in left) for s in {t["status"] for t in left}}


def test_the_listing_is_the_largest_within_the_budget() -> None:
    terminals = _terminals("e" * 40)
    for budget in (150, 400, 1000, 2500):
        body = fitted(terminals, budget)
        assert _tokens(body) <= budget
        kept = len(body["terminals"])
        if kept < len(terminals):  # one more (the next newest) would be over
            bigger = fitted(terminals, budget + 10_000)["terminals"][-(kept + 1) :]
            more = {"count": len(terminals) - kept - 1, "statuses": {"exited": len(terminals) - kept - 1},
                    "note": body["more"]["note"]}  # fmt: skip
            assert _tokens({"terminals": bigger, "more": more}) > budget


def test_a_budget_that_holds_them_all_lists_them_all_and_says_nothing_more() -> None:
    terminals = _terminals("rel")
    assert fitted(terminals, 100_000) == {"terminals": terminals}
