"""Whether a daemon has loaded the tokenizer (lookout.core.tokens imports it only to load it)."""

from __future__ import annotations

from pathlib import Path

TOKENIZER_LIBRARY = "_quicktok"


def tokenizer_mapped(pid: int) -> bool:
    """Whether the process has loaded the tokenizer's shared library (its import maps it)."""
    return TOKENIZER_LIBRARY in Path(f"/proc/{pid}/maps").read_text()
