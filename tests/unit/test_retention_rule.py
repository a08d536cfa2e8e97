"""Which exited terminals the retention prunes (lookout.terminal.journal.retention.to_prune, a pure function)."""

from __future__ import annotations

from lookout.terminal.journal.retention import Ended, Retention, to_prune

DAY = 86400.0
NOW = 100 * DAY


def _ended(n: int, size: int = 1000) -> list[Ended]:
    """n terminals, the i-th ended i days ago."""
    return [Ended(f"t_{i:010d}", NOW - i * DAY, size) for i in range(n)]


def test_the_newest_are_kept_up_to_the_count_and_the_rest_pruned_oldest_first() -> None:
    pruned = to_prune(_ended(5), NOW, Retention(0, 3, 0))
    assert [t.id for t, _ in pruned] == ["t_0000000004", "t_0000000003"]
    assert all(why == "more than 3 exited terminals" for _, why in pruned)


def test_those_ended_longer_ago_than_the_age_are_pruned() -> None:
    pruned = to_prune(_ended(5), NOW, Retention(2.5 * DAY, 0, 0))
    assert [t.id for t, _ in pruned] == ["t_0000000004", "t_0000000003"]
    assert pruned[0][1] == "ended more than 2.5 days ago"


def test_the_size_keeps_the_newest_whose_files_fit() -> None:
    pruned = to_prune(_ended(4, size=400 << 20), NOW, Retention(0, 0, 1024 << 20))
    assert [t.id for t, _ in pruned] == ["t_0000000003", "t_0000000002"]
    assert pruned[0][1] == "exited terminals' files over 1024 MB"


def test_limits_of_zero_keep_everything() -> None:
    assert to_prune(_ended(50, size=1 << 30), NOW, Retention(0, 0, 0)) == []
