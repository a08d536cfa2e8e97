"""The event bus and the delta log: bounded, never blocking, cursors that cannot go wrong silently."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lookout.core.errors import BadInput
from lookout.core.events import EventBus
from lookout.terminal.journal.deltas import DeltaLog, Throttle
from tests.support.terminals import delta


async def test_slow_subscriber_loses_oldest_and_is_told() -> None:
    bus = EventBus(queue_size=3)
    sub = bus.subscribe()
    for i in range(5):
        bus.publish("tick", i=i)
    first = await sub.next()
    assert first["type"] == "dropped" and first["count"] == 2
    assert [(await sub.next())["i"] for _ in range(3)] == [2, 3, 4]
    bus.unsubscribe(sub)
    bus.publish("tick", i=9)  # no subscriber: nothing to do, nothing raised


def test_throttle_has_leading_and_trailing_edges() -> None:
    now = [100.0]
    t = Throttle(0.1, lambda: now[0])
    assert t.delay() == 0  # the first change goes out at once
    t.emitted()
    now[0] += 0.03
    assert t.delay() == pytest.approx(0.07)
    now[0] += 0.07
    assert t.delay() == 0


def test_a_minute_of_spinner_is_at_most_600_deltas() -> None:
    now = [0.0]
    t = Throttle(0.1, lambda: now[0])
    emitted = 0
    pending = False
    while now[0] < 60.0:  # a change every 10 ms; emit when allowed
        pending = True
        if t.delay() == 0:
            t.emitted()
            emitted += 1
            pending = False
        now[0] += 0.01
    assert 500 <= emitted <= 601
    assert pending is False or t.delay() <= 0.1  # the trailing change is due within one interval


def test_delta_cursor_rules(tmp_path: Path) -> None:
    log = DeltaLog(tmp_path)
    assert log.read(0, 10).deltas == [] and log.read(0, 10).resume_cursor == 0
    for i in range(5):
        log.append(delta([(i, f"row {i}")]))
    first = log.read(0, 2)
    assert [d["changed"][0][0] for d in first.deltas] == [0, 1]
    rest = log.read(first.resume_cursor, 10)
    assert [d["changed"][0][0] for d in rest.deltas] == [2, 3, 4]
    assert rest.resume_cursor == rest.file_size == log.size()
    with pytest.raises(BadInput, match="not the start"):
        log.read(first.resume_cursor + 3, 10)
    with pytest.raises(BadInput):
        log.read(log.size() + 1, 10)
    assert log.rows_changed_since(first.resume_cursor) == {2, 3, 4}
    log.append(delta([], cols=100, rows=30, resized=True))
    assert log.rows_changed_since(first.resume_cursor) is None
    log.close()


def test_the_log_keeps_one_file_open_until_closed_and_a_late_delta_still_lands(tmp_path: Path) -> None:
    fds = len(os.listdir("/proc/self/fd"))
    log = DeltaLog(tmp_path)
    for i in range(3):
        log.append(delta([(i, "x")]))
    assert len(os.listdir("/proc/self/fd")) == fds + 1
    log.close()
    assert len(os.listdir("/proc/self/fd")) == fds
    log.append(delta([(9, "late")]))  # after the session ended: written, and no file left open
    assert len(os.listdir("/proc/self/fd")) == fds
    assert [d["changed"][0][0] for d in log.read(0, 10).deltas] == [0, 1, 2, 9]


def test_torn_last_delta_is_not_consumed(tmp_path: Path) -> None:
    log = DeltaLog(tmp_path)
    log.append(delta([(0, "a")]))
    log.close()
    with log.path.open("ab") as f:
        f.write(b'{"cols": 80, "ro')
    page = log.read(0, 10)
    assert len(page.deltas) == 1 and page.resume_cursor < page.file_size


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.integers(0, 50), min_size=1, max_size=30), cursor=st.integers(-5, 5000),
       limit=st.integers(1, 40), torn=st.binary(max_size=20))  # fmt: skip
def test_any_delta_cursor_reads_a_page_or_is_refused(
    tmp_path_factory: pytest.TempPathFactory, rows: list[int], cursor: int, limit: int, torn: bytes
) -> None:
    """Paging with the cursors it hands out visits every delta once, in order; any other cursor is a 400;
    a torn tail is never returned."""
    log = DeltaLog(tmp_path_factory.mktemp("deltas"))
    for i, row in enumerate(rows):
        log.append(delta([(row, f"row {row}")], t=i))
    log.close()
    with open(log.path, "ab") as f:
        f.write(torn.replace(b"\n", b""))
    seen: list[int] = []
    position = 0
    while True:
        page = log.read(position, limit)
        seen.extend(int(d["t"]) for d in page.deltas)
        if page.resume_cursor == position:
            break
        position = page.resume_cursor
    assert seen == list(range(len(rows)))
    try:
        log.read(cursor, limit)
    except BadInput as exc:
        assert "not the start of a delta" in exc.message


def test_a_delta_is_frozen_and_each_json_form_is_a_fresh_copy() -> None:
    d = delta([(3, "row three")], resized=True)
    first, second = d.to_json(), d.to_json()
    assert first == second and first is not second and first["changed"] is not second["changed"]
    first["changed"].append([4, "mutated by one listener"])
    assert d.to_json() == second == {
        "t": 0.0, "cols": 80, "rows": 24, "changed": [[3, "row three"]],
        "cursor": {"left": 0, "top": 0, "visible": True}, "title": "", "alt_screen": False, "raw_offset": 0,
        "resized": True,
    }  # fmt: skip
    with pytest.raises(AttributeError):
        d.title = "x"  # type: ignore[misc]
    assert "full" not in d.to_json() and "resized" not in delta([]).to_json()
