"""The refs a page has shown (lookout.browser.actions.SeenRefs, check_ref): bounded, and a refusal says only what
the record can know (a ref "unknown" only while no ref has been forgotten)."""

from __future__ import annotations

import time

import pytest

from lookout.browser.action_kinds import Click
from lookout.browser.actions import RefCheck, SeenRefs, check_ref
from lookout.core.errors import Conflict


def _known(refs: set[str], ever: SeenRefs) -> RefCheck:
    return RefCheck("o_9", frozenset(refs), time.time(), 0.0, ever=ever)


def test_the_record_keeps_the_newest_refs_and_says_once_it_forgot_one() -> None:
    seen = SeenRefs(kept=3)
    seen.add({"e1", "e2"})
    seen.add({"e3"})
    assert seen.complete and len(seen) == 3
    seen.add({"e1"})  # seen again: the newest
    seen.add({"e4"})
    assert not seen.complete and len(seen) == 3
    assert "e2" not in seen and all(ref in seen for ref in ("e1", "e3", "e4"))


def test_a_ref_never_shown_is_unknown_only_while_the_record_is_whole() -> None:
    seen = SeenRefs(kept=2)
    seen.add({"e1", "e2"})
    with pytest.raises(Conflict, match=r"ref e9 is unknown: no snapshot of this page had it"):
        check_ref(Click(ref="e9"), _known({"e2"}, seen))
    with pytest.raises(Conflict, match=r"ref e1 is no longer on the page"):
        check_ref(Click(ref="e1"), _known({"e2"}, seen))
    seen.add({"e3"})  # e1 or e2 forgotten
    with pytest.raises(Conflict, match=r"ref e9 is not in the last snapshot \(o_9\) nor among the last 2 refs") as why:
        check_ref(Click(ref="e9"), _known({"e3"}, seen))
    assert "unknown" not in why.value.message
    check_ref(Click(ref="e3"), _known({"e3"}, seen))  # in the last snapshot: no refusal
