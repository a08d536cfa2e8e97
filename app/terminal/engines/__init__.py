"""Screen engines: terminal emulators behind the ScreenEngine protocol (see base.py)."""

from __future__ import annotations

from .avt_engine import AvtEngine
from .base import ScreenEngine
from .pyte_engine import PyteEngine

_ENGINES: dict[str, type[AvtEngine | PyteEngine]] = {"avt": AvtEngine, "pyte": PyteEngine}

ENGINE_NAMES: tuple[str, ...] = tuple(_ENGINES)
"""Valid engine names; the first is the default."""


def create_engine(name: str, cols: int, rows: int, scrollback: int) -> ScreenEngine:
    """A new engine of the given kind and size, keeping at most `scrollback` lines of history."""
    try:
        engine = _ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown screen engine {name!r}; valid names: {', '.join(ENGINE_NAMES)}") from None
    return engine(cols, rows, scrollback)
