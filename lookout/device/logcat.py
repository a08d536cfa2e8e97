"""Logcat lines (`-v threadtime`): parsing and filtering by tag and minimum level."""

from __future__ import annotations

import re
from collections.abc import Iterable

LEVELS = "VDIWEF"
LOGCAT_MAX_LINES = 5000
"""The most lines one logcat read returns."""
_LINE = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d+\s+\d+\s+\d+ ([VDIWEFS]) (.*?)\s*: ")


def filter_lines(lines: Iterable[str], *, tag: str | None, level: str | None, limit: int) -> list[str]:
    """The last `limit` lines whose tag is `tag` (exactly) and whose level is `level` or above. Lines that
    are not in threadtime format (the `--------- beginning of main` banners) are kept only unfiltered."""
    floor = LEVELS.index(level) if level else 0
    kept: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match is None:
            if tag is None and level is None:
                kept.append(line)
            continue
        line_level, line_tag = match.groups()
        if tag is not None and line_tag != tag:
            continue
        if line_level != "S" and LEVELS.index(line_level) < floor:
            continue
        kept.append(line)
    return kept[-limit:] if limit else []
