"""The default UI listing on real dumps of real apps (tests/data/ui_dumps, sources in SOURCES.md): hidden nodes
left out, `find` preferring the visible node, clickable nodes carrying their text, and the listing's cost."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from lookout.core.scaling import fit
from lookout.core.tokens import count_tokens
from lookout.device.shown import render_elements
from lookout.device.ui_tree import UiNode, find, listing, parse_hierarchy, prefer_visible

DUMPS = Path(__file__).resolve().parents[1] / "data" / "ui_dumps"
MOBILE_MCP_TOKENS = {"whatsapp_chats": 4363, "tiktok_feed": 4382, "wecom_list": 4389, "sayhi_list": 2217}
"""mobile-mcp's listing of the same dumps, in o200k tokens, as issue 19 measured it."""
MAX_TOKENS_PER_ELEMENT = 25


def _dump(name: str) -> tuple[list[UiNode], tuple[int, int]]:
    nodes = parse_hierarchy((DUMPS / f"{name}.xml").read_bytes())
    return nodes, (max(n.bounds.right for n in nodes), max(n.bounds.bottom for n in nodes))


def _listing(name: str, **options: Any) -> dict:
    nodes, screen = _dump(name)
    scale = fit(*screen, 1000)
    return render_elements(nodes, scale.factor, screen=screen, **options)


ALL_DUMPS = sorted(p.stem for p in DUMPS.glob("*.xml"))


def test_the_real_dumps_are_there() -> None:
    assert len(ALL_DUMPS) >= 6 and "whatsapp_chats" in ALL_DUMPS


def test_hidden_tab_labels_are_left_out_and_flagged_with_all() -> None:
    nodes, screen = _dump("whatsapp_chats")
    label = next(n for n in nodes if n.text == "Comunidades")
    assert (label.bounds.right, label.bounds.bottom) == (0, 0) and not label.visible(screen)
    listed = _listing("whatsapp_chats")
    assert label.index not in [e["index"] for e in listed["elements"]]
    everything = _listing("whatsapp_chats", all=True, max_tokens=100_000)
    flagged = next(e for e in everything["elements"] if e["index"] == label.index)
    assert flagged["hidden"] is True
    assert not any(e.get("hidden") for e in everything["elements"] if nodes[e["index"]].visible(screen))


def test_find_prefers_the_visible_node_carrying_the_same_text() -> None:
    nodes, screen = _dump("whatsapp_chats")
    [hidden] = find(nodes, text="Comunidades")
    [tab] = prefer_visible(nodes, [hidden], screen)
    assert tab.desc == "Comunidades" and "clickable" in tab.flags and tab.visible(screen)
    assert tab.bounds.contains(*tab.bounds.center) and tab.bounds.top > 1400
    assert prefer_visible(nodes, [tab, hidden], screen) == [tab]  # each node once


def test_a_hidden_match_with_no_visible_carrier_is_dropped() -> None:
    nodes, screen = _dump("whatsapp_chats")
    hidden = [n for n in nodes if not n.visible(screen)]
    assert hidden
    kept = prefer_visible(nodes, hidden, screen)
    assert all(n.visible(screen) for n in kept)


def test_offscreen_nodes_are_not_visible() -> None:
    node = parse_hierarchy(
        '<hierarchy rotation="0"><node text="below" class="android.widget.TextView" bounds="[0,2500][100,2600]"/>'
        '<node text="left" class="android.widget.TextView" bounds="[-300,10][-10,50]"/></hierarchy>'
    )
    assert [n.visible((1080, 2400)) for n in node] == [False, False]


def test_a_clickable_row_carries_its_texts() -> None:
    listed = _listing("wecom_list")
    row = next(e for e in listed["elements"] if e.get("text", "").startswith("智界Aigc客户群"))
    assert row["text"] == "智界Aigc客户群（18） | 4分钟前 | 你撤回了一条消息" and "flags" not in row  # tappable
    assert not any(e.get("text") == "4分钟前" for e in listed["elements"])  # not listed apart


def test_label_less_wrappers_give_way_to_their_clickable_content() -> None:
    nodes, screen = _dump("sayhi_list")
    items = listing(nodes, screen)
    listed = {item.node.index for item in items}
    for item in items:
        if not item.label and "scrollable" not in item.node.flags:
            inside = [n for n in nodes if n.index in listed and _inside(nodes, n, item.node)]
            assert not inside, f"wrapper {item.node.index} is listed beside its content {inside}"
    places = [(item.node.bounds, item.label) for item in items]
    assert len(places) == len(set(places))  # SayHi's 37 label-less buttons at one spot: listed once


def _inside(nodes: list[UiNode], node: UiNode, ancestor: UiNode) -> bool:
    up = node.parent
    while up is not None:
        if up == ancestor.index:
            return True
        up = nodes[up].parent
    return False


@pytest.mark.parametrize("name", ALL_DUMPS)
def test_the_listing_costs_at_most_25_tokens_an_element(name: str) -> None:
    listed = _listing(name)
    elements = listed["elements"]
    assert len(elements) >= 20
    per_element = count_tokens(orjson.dumps(elements).decode()) / len(elements)
    assert per_element <= MAX_TOKENS_PER_ELEMENT, f"{name}: {per_element:.1f} tokens an element"


@pytest.mark.parametrize("name", sorted(MOBILE_MCP_TOKENS))
def test_the_listing_is_smaller_than_mobile_mcps(name: str) -> None:
    assert _listing(name)["tokens"] < MOBILE_MCP_TOKENS[name]


@pytest.mark.parametrize("name", ALL_DUMPS)
def test_every_listed_element_can_be_seen(name: str) -> None:
    nodes, screen = _dump(name)
    for element in _listing(name)["elements"]:
        assert nodes[element["index"]].visible(screen)
