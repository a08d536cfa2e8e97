"""Real-shaped uiautomator dumps of a 1080x2400 phone with something drawn over the app (issue 48): an invoice
list of 600 rows or a grid of 600 cells, under a dialog that is a window of its own (a second root of the dump,
as `uiautomator dump` gives the windows on screen) or the last child of the app's root (with a scrim, or
without one), or under a bottom sheet that covers half of a row."""
from __future__ import annotations

from html import escape

APP = "com.example.invoices"
SCREEN = (1080, 2400)
DIALOG = (90, 900, 990, 1500)
"""Where the dialog's panel is, in device pixels."""
ROW_TOP, ROW_HEIGHT = 200, 120
CELL = (54, 80)
"""A cell of the grid: 20 columns of 54 px, 30 rows of 80 px, every one on the screen."""


def node(cls: str, bounds: tuple[int, int, int, int], *children: str, text: str = "", rid: str = "",
         clickable: bool = False, scrollable: bool = False, focused: bool = False, package: str = APP) -> str:  # fmt: skip
    """One <node> with the attributes a real dump has, and its children."""
    flag = "true" if clickable else "false"
    left, top, right, bottom = bounds
    full_id = f"{package}:id/{rid}" if rid else ""
    return (f'<node index="0" text="{escape(text)}" resource-id="{full_id}" class="{cls}" package="{package}" '
            f'content-desc="" checkable="false" checked="false" clickable="{flag}" enabled="true" '
            f'focusable="{flag}" focused="{"true" if focused else "false"}" scrollable="{"true" if scrollable else "false"}" '
            f'long-clickable="false" password="false" selected="false" '
            f'bounds="[{left},{top}][{right},{bottom}]">{"".join(children)}</node>')  # fmt: skip


def dump(*roots: str) -> str:
    return f"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">{''.join(roots)}</hierarchy>"


def invoice_rows(count: int = 600) -> list[str]:
    """The list's rows: "Invoice #10000" and its amount, 120 px each from y=200 (most below the screen)."""
    rows = []
    for i in range(count):
        top = ROW_TOP + i * ROW_HEIGHT
        box = (0, top, 1080, top + ROW_HEIGHT)
        rows.append(node("android.widget.LinearLayout", box,
                         node("android.widget.TextView", (40, top + 20, 700, top + 100), text=f"Invoice #{10000 + i}",
                              rid="number"),
                         node("android.widget.TextView", (760, top + 20, 1040, top + 100), text=f"{(i * 37) % 900}.00 €",
                              rid="amount"),
                         rid="invoice_row", clickable=True))  # fmt: skip
    return rows


def grid_cells() -> list[str]:
    width, height = CELL
    return [node("android.widget.TextView", (c * width, r * height, (c + 1) * width, (r + 1) * height),
                 text=f"{r * 20 + c}", rid="cell", clickable=True) for r in range(30) for c in range(20)]  # fmt: skip


def content(kind: str) -> str:
    """The app's scrolling content: `list` (600 invoice rows) or `grid` (600 cells)."""
    if kind == "list":
        return node("androidx.recyclerview.widget.RecyclerView", (0, ROW_TOP, 1080, 2400), *invoice_rows(),
                    rid="invoices", scrollable=True)  # fmt: skip
    return node("android.widget.GridView", (0, 0, 1080, 2400), *grid_cells(), rid="grid", scrollable=True)


def dialog_panel(rid: str = "parentPanel") -> str:
    left, top, right, bottom = DIALOG
    return node("android.widget.LinearLayout", DIALOG,
                node("android.widget.TextView", (left + 60, top + 60, right - 60, top + 140), text="Delete invoice?",
                     rid="alertTitle"),
                node("android.widget.TextView", (left + 60, top + 160, right - 60, top + 360),
                     text="It cannot be undone.", rid="message"),
                node("android.widget.Button", (right - 560, bottom - 140, right - 320, bottom - 40), text="Cancel",
                     rid="button2", clickable=True),
                node("android.widget.Button", (right - 300, bottom - 140, right - 60, bottom - 40), text="Delete",
                     rid="button1", clickable=True),
                rid=rid)  # fmt: skip


def dialog_window(kind: str) -> str:
    """The content under a dialog that is a window of its own (the dump's second root)."""
    app = node("android.widget.FrameLayout", (0, 0, *SCREEN), content(kind), rid="content")
    window = node("android.widget.FrameLayout", DIALOG, dialog_panel())
    return dump(app, window)


def dialog_child(kind: str, *, scrim: bool) -> str:
    """The content under a dialog laid over it as the last child of the app's root, over a scrim or not."""
    over = [node("android.view.View", (0, 0, *SCREEN), rid="scrim", clickable=True)] if scrim else []
    return dump(node("android.widget.FrameLayout", (0, 0, *SCREEN), content(kind), *over, dialog_panel("dialog"),
                     rid="content"))  # fmt: skip


SHEET_TOP = ROW_TOP + 13 * ROW_HEIGHT + ROW_HEIGHT // 2
"""The bottom sheet's top: half way down row 13 ("Invoice #10013", [0,1760][1080,1880])."""


def bottom_sheet() -> str:
    """The invoice list under a persistent bottom sheet whose top covers the lower half of row 13."""
    sheet = node("android.widget.FrameLayout", (0, SHEET_TOP, 1080, 2400),
                 node("android.widget.TextView", (40, SHEET_TOP + 40, 1040, SHEET_TOP + 120), text="Filters",
                      rid="sheet_title"),
                 node("android.widget.Button", (40, SHEET_TOP + 160, 1040, SHEET_TOP + 280), text="Apply",
                      rid="apply", clickable=True),
                 rid="bottom_sheet")  # fmt: skip
    return dump(node("androidx.coordinatorlayout.widget.CoordinatorLayout", (0, 0, *SCREEN), content("list"), sheet,
                     rid="coordinator"))  # fmt: skip
