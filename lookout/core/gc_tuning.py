"""Python's cyclic garbage collector kept out of the daemon's way.

`freeze_long_lived`: once the daemon is up, what is alive (modules, the application, the history index and
the sessions recovered from disk) lives as long as the daemon; moved to the collector's permanent
generation, a full collection no longer walks it. Under bench/load.py a full collection of the daemon's
140,000 objects took 70 to 120 ms, a stall every request in flight waited out. It is frozen without a
collection first: what the imports left as garbage is little, and a full collection of it all would delay
the daemon's start by about 60 ms (the start is the floor of every restart). For the same reason the command
imports its code, and the daemon its frameworks and its app, with the collector paused (lookout.launch,
lookout.daemon.serve.run), frozen as soon as they are in: young collections walking the growing heap took a
sixth of the imports' time.

`gc_paused`: no collection while a large tree is built and dropped. A page snapshot of 5,000 nodes
allocates tens of thousands of containers; each 700 of them start a young collection, and every tenth of
those an older one that walks every object the daemon holds (browser handles, sessions, routes). Measured
on a 5,600-node page: parse and render take twice as long with the collector on. Reference counting still
frees everything that is not in a cycle at once; cycles made meanwhile wait for the next collection after
the pause. Threads share the collector, so the pause is counted: it ends when the last of the overlapping
pauses does.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def long_lived() -> Iterator[None]:
    """What the block makes (imports, the app) lives as long as the process: no collection while it is made,
    then all of it frozen."""
    with gc_paused():
        yield
        freeze_long_lived()


def freeze_long_lived() -> None:
    """Freeze every object the collector tracks now. (Without counting them: gc.get_freeze_count walks every
    frozen object, 5 to 9 ms each time once the daemon has imported its frameworks.)"""
    gc.freeze()


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (the collector's state before the first pause is restored)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
