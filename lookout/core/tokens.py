"""Exact token counts with a real tokenizer (o200k_base, bundled by quicktok-v1: no download).

The encoding takes about 0.7 s of CPU and 65 MB to load, and its load holds the GIL throughout (the loop waits for
it, even when it runs in a thread). So it is not loaded when the daemon starts (that delayed the daemon's first
answers, and a daemon that counts no tokens would pay for it) but on the first count, or before: `load_soon`, once
a resource that will be counted is opened (its first frame, its end at the latest, counts tokens), so that the
load does not land on what comes later, such as ending many terminals at once. Concurrent first counts wait for
one load. (Loaded while a restarted daemon takes its running terminals up, it overlapped nothing: the listing came
3.6 s later and every screen no sooner, bench/terminal_cost.py --case recovery on a loaded machine.) A hot restart's
new daemon loads it before it accepts when the daemon before had (lookout.daemon.serve), while that one still serves:
loaded after the hand-over, it held the new daemon's first answers 0.5-0.6 s (bench/restart_load.py).
"""

from __future__ import annotations

import threading
from typing import Any

ENCODING = "o200k_base"
_lock = threading.Lock()
_encoding: Any = None
_loader: threading.Thread | None = None


def _get() -> Any:
    global _encoding
    with _lock:
        if _encoding is None:
            import quicktok

            _encoding = quicktok.get_encoding(ENCODING)
    return _encoding


def warm_up() -> None:
    """Load the encoding now (a benchmark keeps the load out of what it times)."""
    _get()


def load_soon() -> threading.Thread:
    """Load the encoding in a thread of its own (once per process; later calls return the same thread): it holds
    no worker of the loop's executor while it loads."""
    global _loader
    with _lock:
        if _loader is None:
            _loader = threading.Thread(target=_get, name="tokenizer-load", daemon=True)
            _loader.start()
    return _loader


def loading() -> bool:
    """Whether this process has loaded the encoding or begun to."""
    return _encoding is not None or _loader is not None


def count_tokens(text: str) -> int:
    """How many o200k_base tokens `text` is (special-token text counts as ordinary text)."""
    return (_encoding or _get()).count(text) if text else 0  # once loaded, without the lock: called per line
