"""Exact token counts with a real tokenizer (o200k_base, bundled by quicktok-v1: no download).

The encoding takes about 0.5 s of CPU to load, so it is loaded once, on the first count (callers count in
worker threads), not when the daemon starts: the load holds the GIL, so done at start it delayed the daemon's
first answer, even from a thread. Concurrent first counts wait for one load. (Loaded while a restarted daemon
takes its running terminals up, it overlapped nothing: the listing came 3.6 s later and every screen no sooner,
bench/terminal_cost.py --case recovery on a loaded machine.)
"""

from __future__ import annotations

import threading
from typing import Any

ENCODING = "o200k_base"
_lock = threading.Lock()
_encoding: Any = None


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


def count_tokens(text: str) -> int:
    """How many o200k_base tokens `text` is (special-token text counts as ordinary text)."""
    return _get().count(text) if text else 0
