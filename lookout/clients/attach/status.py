"""The status line of a window smaller than the terminal it shows (pure): that the view is clipped, the
terminal's real size, which part is shown, and how to take it over or leave. Names and titles come from
programs and API clients: they are printed with their control characters escaped, never sent as they are."""

from __future__ import annotations

from wcwidth import wcwidth

from lookout.clients.attach.painter import View
from lookout.core.printable import printable

REVERSE = "\x1b[0;7m"


def _fit(text: str, width: int) -> str:
    """`text` cut to `width` cells (with an ellipsis when cut) and padded with blanks to exactly `width`."""
    used = 0
    out: list[str] = []
    for char in text:
        w = max(wcwidth(char), 0)
        if used + w > width:
            while out and used + 1 > width:  # room for the ellipsis
                used -= max(wcwidth(out.pop()), 0)
            out.append("…")
            used += 1
            break
        out.append(char)
        used += w
    return "".join(out) + " " * (width - used)


def status_line(
    terminal_id: str, name: str, title: str, screen: tuple[int, int], view: View, detach_key: str, width: int
) -> str:
    """One row of `width` cells in reverse video: the terminal, its size, the part shown, and the keys."""
    cols, rows = screen
    who = f'{terminal_id} "{printable(name)}"' if name and name != terminal_id else terminal_id
    shown = f"cols {view.left + 1}-{view.left + view.cols}, rows {view.top + 1}-{view.top + view.rows}"
    parts = [f"clipped: {who} is {cols}x{rows}, this window shows {shown} (it follows the cursor)",
             "--resize takes it over", f"{detach_key} detaches"]  # fmt: skip
    if title:
        parts.append(f"title {printable(title)}")
    return REVERSE + _fit(" " + " · ".join(parts), width)


def lease_row(text: str, width: int) -> str:
    """One row of `width` cells in reverse video saying `text` (the lease that refuses this client's keys)."""
    return REVERSE + _fit(" " + printable(text), width)
