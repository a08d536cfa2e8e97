"""lookout.core.memory: the free memory of the heaps is given back once, a little after it is asked for."""

from __future__ import annotations

import threading

import pytest

from lookout.core import memory
from tests.support.polling import eventually


def test_many_asks_meanwhile_make_one_trim_later(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    ran = threading.Event()

    def trim(pad: int) -> int:
        calls.append(pad)
        ran.set()
        return 1

    later = threading.Event()

    class Clock:
        """The trim's wait, ended by the test."""

        @staticmethod
        def sleep(_seconds: float) -> None:
            later.wait(30)

    monkeypatch.setattr(memory, "_trim", trim)
    monkeypatch.setattr(memory, "time", Clock)
    for _ in range(50):
        memory.trim_soon()
    assert calls == [], "it runs later, in a thread of its own"
    later.set()
    assert ran.wait(30)
    assert calls == [0]
    memory.trim_soon()  # a later ask makes a later trim
    eventually(lambda: len(calls) == 2, timeout=30, what="the second trim")


def test_the_c_library_of_this_machine_has_malloc_trim() -> None:
    assert memory._trim is not None and memory._trim(0) in (0, 1)
