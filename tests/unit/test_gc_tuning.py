"""The collector kept out of the way: frozen after startup, paused around big snapshot trees (counted across
threads, state restored)."""
from __future__ import annotations

import gc
import threading

from lookout.core.gc_tuning import freeze_long_lived, gc_paused


def test_overlapping_pauses_end_with_the_last_one() -> None:
    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other)
    with gc_paused():
        assert not gc.isenabled()
        thread.start()
        assert inside.wait(5)
    assert not gc.isenabled()  # the other thread's pause still runs
    release.set()
    thread.join(5)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off_and_errors_pass_through() -> None:
    gc.disable()
    try:
        try:
            with gc_paused():
                raise KeyError("x")
        except KeyError:
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    try:
        with gc_paused():
            raise ValueError("y")
    except ValueError:
        pass
    assert gc.isenabled()


def test_what_is_alive_at_startup_is_frozen_out_of_later_collections() -> None:
    class Survivor:
        pass

    alive = Survivor()
    try:
        before = gc.get_freeze_count()
        freeze_long_lived()
        assert gc.get_freeze_count() > before
        assert not any(o is alive for o in gc.get_objects())  # full collections no longer walk it
        later = Survivor()
        assert any(o is later for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(o is alive for o in gc.get_objects())
