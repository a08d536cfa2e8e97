"""What a dialog covers is not listed as there, what is on top comes first, and every listing has a budget
(issue 48): pure functions over real-shaped dumps (tests.support.overlays) and the real dumps of real apps."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lookout.core.scaling import fit
from lookout.device.layers import Stack
from lookout.device.shown import DEFAULT_MAX_TOKENS, render_elements
from lookout.device.ui_tree import Bounds, UiNode, listing, parse_hierarchy
from tests.support import overlays

DUMPS = Path(__file__).resolve().parents[1] / "data" / "ui_dumps"
SCALE = fit(*overlays.SCREEN, 1000).factor


def _render(xml: str, **options: Any) -> tuple[list[UiNode], dict[str, Any]]:
    nodes = parse_hierarchy(xml)
    return nodes, render_elements(nodes, SCALE, screen=overlays.SCREEN, **options)


def _texts(result: dict[str, Any]) -> list[str]:
    return [e.get("text", "") for e in result["elements"]]


def _real(name: str) -> tuple[list[UiNode], tuple[int, int]]:
    nodes = parse_hierarchy((DUMPS / f"{name}.xml").read_bytes())
    return nodes, (max(n.bounds.right for n in nodes), max(n.bounds.bottom for n in nodes))


@pytest.mark.parametrize("kind", ["list", "grid"])
@pytest.mark.parametrize("dialog", ["window", "child with scrim"])
def test_what_a_modal_dialog_covers_is_left_out_and_counted(kind: str, dialog: str) -> None:
    xml = overlays.dialog_window(kind) if dialog == "window" else overlays.dialog_child(kind, scrim=True)
    nodes, result = _render(xml)
    texts = _texts(result)
    assert not any(t.startswith("Invoice #") for t in texts) and not any(t.isdigit() for t in texts)
    assert texts[:4] == ["Delete invoice?", "It cannot be undone.", "Cancel", "Delete"]
    covered = result["covered"]
    assert covered["elements"] == (19 if kind == "list" else 600) + 1  # what is on the screen, and the list itself
    assert "Delete invoice?" in covered["by"][0].get("inner_text", "") or covered["by"][0]["id"] == "scrim"
    everything = render_elements(nodes, SCALE, screen=overlays.SCREEN, all=True, max_tokens=1_000_000)
    row = next(n for n in nodes if n.text in ("Invoice #10004", "224"))
    assert "covered_by" in next(e for e in everything["elements"] if e["index"] == row.index)


def test_a_dialog_over_a_grid_comes_first_and_a_small_budget_keeps_its_buttons() -> None:
    nodes, result = _render(overlays.dialog_child("grid", scrim=False), max_tokens=500)
    texts = _texts(result)
    assert texts[:4] == ["Delete invoice?", "It cannot be undone.", "Cancel", "Delete"]
    assert result["tokens"] <= 500 and result["cut"]["omitted"] > 400
    assert "find" in result["cut"]["get_more"] and "max_tokens" in result["cut"]["get_more"]
    # the cells wholly under the panel are covered, those it covers in part are listed with what stays free
    left, top, right, bottom = overlays.DIALOG
    under = [n for n in nodes if n.resource_id == "cell" and left <= n.bounds.left and n.bounds.right <= right
             and top <= n.bounds.top and n.bounds.bottom <= bottom]  # fmt: skip
    assert result["covered"]["elements"] == len(under) > 50


def test_the_default_listing_of_a_grid_is_within_its_budget_and_says_what_was_cut() -> None:
    _, full = _render(overlays.dump(overlays.content("grid")), max_tokens=1_000_000)
    assert full["tokens"] > 2 * DEFAULT_MAX_TOKENS  # 600 cells on the screen
    _, result = _render(overlays.dump(overlays.content("grid")))
    assert result["tokens"] <= DEFAULT_MAX_TOKENS
    assert result["cut"]["max_tokens"] == DEFAULT_MAX_TOKENS and result["cut"]["omitted"] == 601 - result["shown"]
    assert result["cut"]["first_omitted"] == full["elements"][result["shown"]]["index"]


def test_a_bottom_sheet_over_half_a_row_leaves_its_upper_half() -> None:
    nodes, result = _render(overlays.bottom_sheet())
    row = next(e for e in result["elements"] if e.get("text", "").startswith("Invoice #10013"))
    assert "flags" not in row  # a row that can be tapped, in its free part
    stack = Stack(nodes, overlays.SCREEN)
    free = stack.free_part(nodes[row["index"]])
    assert free.part == Bounds(0, 1760, 1080, overlays.SHEET_TOP) and free.cover is not None
    assert row["center"] == [round(540 / SCALE), round((1760 + overlays.SHEET_TOP) / 2 / SCALE)]
    assert _texts(result)[:2] == ["Filters", "Apply"]  # the sheet is on top
    assert not any(t.startswith("Invoice #10014") for t in _texts(result))  # wholly under the sheet


def test_a_tap_point_under_a_dialog_window_names_the_dialog() -> None:
    nodes = parse_hierarchy(overlays.dialog_window("list"))
    row = next(n for n in nodes if n.text == "Invoice #10004").parent
    assert row is not None
    stack = Stack(nodes, overlays.SCREEN)
    assert stack.cover_at(nodes[row], 540, 1020) is not None  # inside the dialog's bounds
    assert stack.cover_at(nodes[row], 40, 2300) is not None  # outside them: a modal dialog takes it too


@pytest.mark.parametrize("name", sorted(p.stem for p in DUMPS.glob("*.xml")))
def test_nothing_on_the_real_dumps_is_left_out_as_covered(name: str) -> None:
    nodes, screen = _real(name)
    stack = Stack(nodes, screen)
    assert all(stack.free_part(item.node).part is not None for item in listing(nodes, screen))


@pytest.mark.parametrize("name", sorted(p.stem for p in DUMPS.glob("*.xml")))
def test_every_text_on_the_screen_is_in_the_listing(name: str) -> None:
    nodes, screen = _real(name)
    shown = " ".join(item.label for item in listing(nodes, screen))
    for node in nodes:
        if node.label and node.visible(screen):
            assert node.label[:20] in shown or node.label[:23] + "…" in shown, node.label


def test_the_floating_button_over_a_whatsapp_row_is_listed_first() -> None:
    nodes, screen = _real("whatsapp_chats")
    result = render_elements(nodes, fit(*screen, 1000).factor, screen=screen)
    assert result["elements"][0]["index"] == 187 and nodes[187].resource_id == "fab"
    row = next(e for e in result["elements"] if e.get("text", "").startswith("Felipe digiboard"))
    fab = nodes[187].bounds.to_image(fit(*screen, 1000).factor)
    assert not fab.contains(*row["center"]) and row["center"][0] < fab.left  # beside the button, in the row


def test_window_layers_from_a_windows_dump_decide_what_is_on_top() -> None:
    """`uiautomator dump --windows` lists the top window first, with its layer: the layer decides, not the order."""
    xml = overlays.dialog_window("list")
    app_root, dialog_root = xml.index('<node index="0" text="" resource-id="com.example.invoices:id/content"'), \
        xml.rindex('<node index="0" text="" resource-id="" class="android.widget.FrameLayout"')  # fmt: skip
    app, dialog = xml[app_root:dialog_root], xml[dialog_root : xml.rindex("</hierarchy>")]
    windows = (f'<display id="0"><window index="0" layer="2" type="TYPE_APPLICATION">{dialog}</window>'
               f'<window index="1" layer="1" type="TYPE_APPLICATION">{app}</window></display>')  # fmt: skip
    nodes, result = _render(overlays.dump(windows))
    assert {n.layer for n in nodes} == {1, 2}
    assert _texts(result)[:4] == ["Delete invoice?", "It cannot be undone.", "Cancel", "Delete"]
    assert result["covered"]["elements"] == 20 and not any(t.startswith("Invoice #") for t in _texts(result))
    # without layers, the dialog listed first is still above the full-screen activity: it is the smaller window
    _, unlayered = _render(overlays.dump(windows.replace(' layer="2"', "").replace(' layer="1"', "")))
    assert _texts(unlayered) == _texts(result) and unlayered["covered"] == result["covered"]


def test_of_two_full_screen_windows_the_one_holding_the_focus_is_on_top() -> None:
    """A full-screen dialog (a sheet with its scrim) listed before the activity, as uiautomator2 lists the active
    window first: its focused field puts it on top."""
    field = overlays.node("android.widget.EditText", (40, 1900, 1040, 2000), text="Note", clickable=True, focused=True)
    sheet = overlays.node("android.widget.FrameLayout", (0, 0, *overlays.SCREEN), field)
    app = overlays.node("android.widget.FrameLayout", (0, 0, *overlays.SCREEN), overlays.content("list"))
    nodes, result = _render(overlays.dump(sheet, app))
    assert "focused" in nodes[1].flags
    assert _texts(result)[0] == "Note" and not any(t.startswith("Invoice #") for t in _texts(result))
