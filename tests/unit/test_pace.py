"""When a holder reads its PTY (lookout.terminal.holder.pace): at once, or after a rest."""

from __future__ import annotations

from lookout.terminal.holder.pace import BUSY_S, FLOOD_BYTES, FLOOD_HOLD_S, PACE_S, Pace


def _lines(pace: Pace, start: float, until: float, every: float = 0.02, size: int = 20) -> list[bool]:
    """Reads of `size` bytes every `every` seconds from `start` to `until`: whether each rests."""
    rests, now = [], start
    while now < until:
        rests.append(pace.read(now, size))
        now += every
    return rests


def test_a_program_is_read_at_once_until_it_has_written_for_busy_s_without_a_pause() -> None:
    pace = Pace()
    rests = _lines(pace, 10.0, 10.0 + BUSY_S - 0.001)
    assert rests and not any(rests)
    assert pace.read(10.0 + BUSY_S + 0.01, 20) and pace.resting


def test_a_rest_ends_at_a_read_that_finds_nothing_and_a_pause_starts_a_new_run() -> None:
    pace = Pace()
    _lines(pace, 10.0, 11.0)
    assert pace.read(11.0 + PACE_S, 20)  # after a rest, the next read with output rests again
    assert not pace.read(11.0 + 2 * PACE_S, 0)  # the program paused: read at once again
    assert not pace.read(11.0 + 5 * PACE_S, 20)  # output after a pause: a new run, not yet busy
    assert not any(_lines(pace, 11.0 + 5 * PACE_S + 0.02, 11.0 + 5 * PACE_S + BUSY_S - 0.01))


def test_input_ends_a_rest_and_what_answers_it_is_read_at_once() -> None:
    pace = Pace()
    assert _lines(pace, 10.0, 11.0)[-1]
    pace.attend(11.0)
    assert not pace.resting
    assert not any(_lines(pace, 11.0, 11.0 + BUSY_S - 0.01))


def test_a_flood_is_read_without_rests_for_flood_hold_s_after_its_last_big_read() -> None:
    pace = Pace()
    _lines(pace, 10.0, 11.0)
    assert not pace.read(11.0, FLOOD_BYTES)
    assert not any(_lines(pace, 11.02, 11.0 + FLOOD_HOLD_S - 0.01))
    assert pace.read(11.0 + FLOOD_HOLD_S + 0.01, 20)
