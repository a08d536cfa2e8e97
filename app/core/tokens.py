"""Exact token counts with a real tokenizer (o200k_base, bundled by quicktok-v1: no download).

The encoding takes about 0.5 s to load, so it is loaded once, on first use; the daemon warms it up in a
worker thread at start.
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
    _get()


def count_tokens(text: str) -> int:
    """How many o200k_base tokens `text` is (special-token text counts as ordinary text)."""
    return _get().count(text) if text else 0
