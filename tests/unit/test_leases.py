"""The lease book (lookout.core.leases): take, renew, let go, expiry, refusals naming the holder, bad durations,
a person's knowing take-over noted once, and the file that carries leases over a restart."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lookout.core.errors import BadInput, NotFound
from lookout.core.leases import MAX_LEASE_S, LeaseBook, Leased

R = "terminal:t_0123456789"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_another_hand_is_refused_with_the_holder_and_the_end_until_expiry() -> None:
    clock = Clock()
    book = LeaseBook(None, clock)
    lease, renewed = book.take(R, "A", 60)
    assert (lease.holder, renewed) == ("A", False)
    book.admit(R, "A")  # the holder acts
    with pytest.raises(Leased) as refused:
        book.admit(R, "B")
    assert "'A'" in refused.value.message and "2027-01-15T08:01:00Z" in refused.value.message
    assert refused.value.status == 409 and refused.value.details["holder"] == "A"
    clock.now += 60  # it ends by itself
    book.admit(R, "B")
    assert book.current(R) is None and book.describe(R) is None


def test_only_the_holder_renews_or_lets_go() -> None:
    clock = Clock()
    book = LeaseBook(None, clock)
    book.take(R, "A", 10)
    clock.now += 5
    lease, renewed = book.take(R, "A", 30)
    assert renewed and lease.expires_at == clock.now + 30 and lease.taken_at == clock.now - 5
    with pytest.raises(Leased, match="only 'A' renews"):
        book.take(R, "B", 30)
    with pytest.raises(Leased, match="only 'A' lets it go"):
        book.let_go(R, "B")
    assert book.let_go(R, "A").holder == "A"
    with pytest.raises(NotFound, match="has no lease"):
        book.let_go(R, "A")
    assert book.take(R, "B", 1)[0].holder == "B"  # free again


@pytest.mark.parametrize("duration", [0, -5, 0.5, MAX_LEASE_S + 1, 1e300, float("inf"), float("nan")])
def test_a_duration_out_of_range_is_bad_input_with_the_range(duration: float) -> None:
    with pytest.raises(BadInput, match="from 1 to 3600 seconds") as bad:
        LeaseBook(None).take(R, "A", duration)
    assert bad.value.details["field"] == "duration_s"


def test_a_person_taking_over_goes_in_and_is_noted_once() -> None:
    book = LeaseBook(None, Clock())
    book.take(R, "A", 60)
    taken = book.admit(R, "web-ui", take_over=True)
    assert taken is not None and taken.taken_over_by == ("web-ui",)
    assert book.admit(R, "web-ui", take_over=True) is None  # noted already
    assert book.describe(R)["taken_over_by"] == ["web-ui"]  # type: ignore[index]
    with pytest.raises(Leased):
        book.admit(R, "B")  # the lease still holds for everyone else


def test_the_book_is_a_private_file_read_again_with_expired_leases_dropped(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "leases.json"
    book = LeaseBook(path, clock)
    book.take(R, "A", 100)
    book.take("page:p_0123456789", "B", 10)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    clock.now += 50
    again = LeaseBook(path, clock)
    again.load()
    assert again.current(R) is not None and again.current(R).holder == "A"  # type: ignore[union-attr]
    assert again.current("page:p_0123456789") is None
    with pytest.raises(Leased):
        again.admit(R, "B")


def test_a_damaged_book_starts_empty_and_a_released_one_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "leases.json"
    path.write_text('{"leases": [{"resource": 1')
    book = LeaseBook(path)
    book.load()
    assert book.current(R) is None
    book.released = True
    book.take(R, "A", 10)
    assert path.read_text() == '{"leases": [{"resource": 1'
