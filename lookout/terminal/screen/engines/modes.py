"""DEC private modes the engines care about, and alternate-screen tracking for an engine that hides it."""

from __future__ import annotations

import re

from .escapes import partial_escape

ALT_SCREEN_MODES = frozenset({47, 1047, 1049})
"""Set: switch to the alternate screen buffer; reset: back to the primary one."""

DECCKM = 1
"""Application cursor keys."""

_SWITCH = re.compile(r"\x1b(?:\[\?([0-9;]*)([hl])|c)")


class AltScreenTracker:
    """Follows alternate-screen switches (DECSET/DECRST 47, 1047, 1049, and RIS) in decoded output.

    A sequence split across two texts is still seen: the unfinished end of one text is scanned again with
    the next. Texts without `ESC [ ?` or `ESC c` are not scanned at all.
    """

    def __init__(self) -> None:
        self.active = False
        self._tail = ""

    def scan(self, text: str) -> int | None:
        """Update `active` from `text`. If `text` ends on the alternate screen after switching to it, return
        the offset in `text` where that last switch begins (0 if it began in the previous text); else None."""
        tail = self._tail
        scanned = tail + text if tail else text
        self._tail = scanned[partial_escape(scanned) :]
        # "?" alone is a memchr (50x faster than "\x1b[?" in ESC-dense output)
        if not ("?" in scanned and "\x1b[?" in scanned) and "\x1bc" not in scanned:
            return None
        entered = None
        for match in _SWITCH.finditer(scanned):
            params, final = match.groups()
            if final is not None and ALT_SCREEN_MODES.isdisjoint(int(p) for p in params.split(";") if p):
                continue
            active = final == "h"
            if active != self.active:
                self.active = active
                entered = max(0, match.start() - len(tail)) if active else None
        return entered
