"""Screen engines: terminal emulators behind the ScreenEngine protocol (see base.py)."""

from __future__ import annotations

from .avt_engine import AvtEngine
from .base import ScreenEngine

ENGINE_NAMES: tuple[str, ...] = ("avt", "pyte")
"""Valid engine names; the first is the default."""


def create_engine(name: str, cols: int, rows: int, scrollback: int) -> ScreenEngine:
    """A new engine of the given kind and size, keeping at most `scrollback` lines of history."""
    if name == "avt":
        return AvtEngine(cols, rows, scrollback)
    if name == "pyte":
        from .pyte_engine import PyteEngine  # the fallback: loaded only where it is chosen

        return PyteEngine(cols, rows, scrollback)
    raise ValueError(f"unknown screen engine {name!r}; valid names: {', '.join(ENGINE_NAMES)}")
