"""Escape-sequence helpers shared by the screen engines."""

from __future__ import annotations

import re

from .base import Color, Style

_PARTIAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*)?")
_COLON_SGR = re.compile(r"\x1b\[([0-9;]*:[0-9;:]*)m")
_C1_TO_7BIT = {c1: "\x1b" + chr(c1 - 0x40) for c1 in range(0x80, 0xA0)}


def partial_escape(text: str, window: int = 64) -> int:
    """Where an unfinished ESC or CSI sequence at the end of `text` begins (looking `window` characters
    back), or len(text) if there is none."""
    start = text.rfind("\x1b", max(0, len(text) - window))
    return start if start >= 0 and _PARTIAL.fullmatch(text, start) else len(text)


def _semicolon_params(group: str) -> list[str]:
    """The `;` parameters equivalent to one `:`-separated SGR parameter (ITU T.416 form)."""
    head, *sub = group.split(":")
    if head in ("38", "48"):
        if sub[:1] == ["5"] and len(sub) >= 2:
            return [head, "5", sub[1] or "0"]
        if sub[:1] == ["2"] and len(sub) >= 4:
            rgb = sub[1:4] if len(sub) == 4 else sub[2:5]  # 38:2:r:g:b or 38:2:<colour space>:r:g:b
            return [head, "2", *(value or "0" for value in rgb)]
        return []
    if head == "4":  # 4:0 is "no underline"; 4:1 to 4:5 are underline styles
        return ["24"] if sub[:1] == ["0"] else ["4"]
    return [] if head == "58" else [head]  # 58 is the underline colour, which no engine here keeps


def _rewrite_sgr(match: re.Match[str]) -> str:
    params = [p for group in match.group(1).split(";") for p in (_semicolon_params(group) if ":" in group else [group])]
    return f"\x1b[{';'.join(params)}m" if params else ""


def sgr_semicolons(text: str) -> str:
    """Rewrite SGR sequences that use `:` sub-parameters (`38:5:n`, `38:2::r:g:b`, `4:3`) into the `;` form
    every emulator understands."""
    return _COLON_SGR.sub(_rewrite_sgr, text) if ":" in text else text


def to_7bit(text: str) -> str:
    """Replace 8-bit C1 controls (such as CSI, U+009B) with their 7-bit ESC forms (ESC [)."""
    return text.translate(_C1_TO_7BIT)


def _color_params(color: Color, base: int) -> list[str]:
    if color is None:
        return []
    if isinstance(color, tuple):
        return [str(base + 8), "2", *map(str, color)]
    if color < 8:
        return [str(base + color)]
    if color < 16:
        return [str(base + 60 + color - 8)]
    return [str(base + 8), "5", str(color)]


def sgr(style: Style) -> str:
    """The SGR sequence that sets exactly `style` (starting from a reset)."""
    params = ["0"]
    for flag, code in (
        (style.bold, "1"),
        (style.faint, "2"),
        (style.italic, "3"),
        (style.underline, "4"),
        (style.blink, "5"),
        (style.inverse, "7"),
        (style.strikethrough, "9"),
    ):
        if flag:
            params.append(code)
    params += _color_params(style.fg, 30) + _color_params(style.bg, 40)
    return f"\x1b[{';'.join(params)}m"
