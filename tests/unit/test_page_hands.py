"""Several hands on one page (lookout.browser.hands, pure): each agent's own snapshot, who acted last, and the check
of a ref against the page after another hand's action (went, changed, or only moved or focused)."""
from __future__ import annotations

import pytest

from lookout.browser.actions import RefCheck
from lookout.browser.hands import MAX_AGENTS, Acted, PageHands, check_unchanged, ref_line
from lookout.core.errors import Conflict

SEEN = """- generic [ref=e1]:
  - button "Save" [ref=e2] [cursor=pointer] [box=10,10,50,20]
  - 'button "Open #1" [ref=e3] [box=10,40,50,20]'"""
B = Acted("agent-B", 1_800_000_000.0, "click")


def test_a_ref_s_line_without_its_box_and_focus() -> None:
    assert ref_line(SEEN, "e2") == 'button "Save" [ref=e2] [cursor=pointer]'
    assert ref_line(SEEN, "e3") == 'button "Open #1" [ref=e3]'
    assert ref_line(SEEN, "e9") is None
    moved = SEEN.replace("[box=10,10,50,20]", "[active] [box=10,90,50,20]")
    check_unchanged("e2", "o_1", SEEN, moved, B)  # scrolled and focused: the same element


def test_a_ref_that_went_or_changed_is_refused_naming_the_hand_and_its_action() -> None:
    with pytest.raises(Conflict, match=r"ref e3 .*no longer on the page: the click of 'agent-B' at .*o_1") as went:
        check_unchanged("e3", "o_1", SEEN, SEEN.replace("e3", "e7"), B)
    assert went.value.details == {"ref": "e3", "by": "agent-B"}
    with pytest.raises(Conflict, match=r"it was `button \"Save\" \[ref=e2\] \[cursor=pointer\]`, it is now .*disabled"):
        check_unchanged("e2", "o_1", SEEN, SEEN.replace('"Save" [ref=e2]', '"Save" [disabled] [ref=e2]'), B)


def test_each_agent_keeps_its_own_snapshot_and_another_s_action_after_it_counts() -> None:
    hands = PageHands()
    page_last = RefCheck("o_page", frozenset({"e1"}), 5.0, 0.0)
    hands.saw("A", RefCheck("o_a", frozenset({"e2"}), 10.0, 0.0))
    assert hands.known("A", page_last).obs_id == "o_a" and hands.known("C", page_last) is page_last
    hands.acted("A", "click")
    assert hands.other_since("A", 0.0) is None  # its own action
    hands.acted("B", "fill")
    assert hands.other_since("A", 10.0) is not None and hands.other_since("A", hands.last.at + 1) is None  # type: ignore[union-attr]
    assert hands.last is not None and hands.last.to_json()["agent"] == "B"
    for n in range(MAX_AGENTS + 1):
        hands.saw(f"x{n}", page_last)
    assert len(hands.seen) == MAX_AGENTS and "A" not in hands.seen
