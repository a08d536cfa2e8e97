"""The pure parts of reading closed shadow roots into a snapshot (lookout.browser.closed_shadow): which nodes are
inside closed roots, the lines of a root's accessibility nodes, and where those lines go in Playwright's text."""

from __future__ import annotations

from typing import Any

from lookout.browser.aria import parse
from lookout.browser.closed_shadow import closed_roots, section, shown_ids, splice, tops


def _ax(node_id: int, role: str, name: str = "", children: tuple[int, ...] = (), **extra: Any) -> dict[str, Any]:
    return {"nodeId": str(node_id), "backendDOMNodeId": node_id, "role": {"value": role}, "name": {"value": name},
            "childIds": [str(c) for c in children], **extra}  # fmt: skip


def _layout(nodes: list[tuple[int, int, str | None]], scroll_y: int = 0) -> dict[str, Any]:
    """A DOMSnapshot.captureSnapshot answer: nodes as (parent index, backend id, kind of root it is in), each with
    a box 10 px high at y = 100 * its index (in the document)."""
    strings = ["closed", "open"]
    rare = [(i, strings.index(kind)) for i, (_, _, kind) in enumerate(nodes) if kind]
    return {"strings": strings, "documents": [{
        "nodes": {"parentIndex": [n[0] for n in nodes], "backendNodeId": [n[1] for n in nodes],
                  "shadowRootType": {"index": [i for i, _ in rare], "value": [v for _, v in rare]}},
        "layout": {"nodeIndex": list(range(len(nodes))), "bounds": [[0, 100 * i, 50, 10] for i in range(len(nodes))]},
        "scrollOffsetX": 0, "scrollOffsetY": scroll_y}]}  # fmt: skip


def test_closed_roots_are_the_outermost_hosts_and_everything_inside_them() -> None:
    layout = _layout([
        (-1, 1, None),  # 0 the document
        (0, 2, None),  # 1 a host
        (1, 3, None),  # 2 its light child
        (1, 4, "closed"),  # 3 its closed root's node
        (3, 5, "closed"),  # 4
        (4, 6, "open"),  # 5 an open root inside the closed one
        (4, 7, "closed"),  # 6 a closed root inside the closed one
        (4, 12, None),  # 7 a light child of host 2, slotted (the flat tree)
        (0, 8, None),  # 8 a host of an open root
        (8, 9, "open"),  # 9
        (0, 10, None),  # 10 another closed host
        (10, 11, "closed"),  # 11
    ], scroll_y=50)  # fmt: skip
    hosts, owner, boxes = closed_roots(layout)
    assert hosts == [2, 10], "nested closed roots are read with their outer root"
    assert owner == {4: 2, 5: 2, 6: 2, 7: 2, 11: 10}, "light children (3, 12) and open roots outside (9) are not inside"
    assert boxes[4] == (0, 250, 50, 10), "in the viewport: the document's scroll taken off"


DISABLED = {"name": "disabled", "value": {"value": True}}
NODES = [
    _ax(1, "RootWebArea", "Card", (8,)),
    _ax(8, "generic", "", (7, 15, 21, 23, 25, 2, 9)),
    _ax(7, "button", "Outside"),
    _ax(9, "paragraph", "After"),
    _ax(15, "LabelText", "", (16, 17)),
    _ax(16, "StaticText", "Email "),
    _ax(17, "textbox", "Email", (19,), value={"type": "string", "value": "hi"}),
    _ax(19, "generic", "", (20,)),
    _ax(20, "StaticText", "hi"),
    _ax(21, "button", "Save", (22,)),
    _ax(22, "StaticText", "Save"),
    _ax(23, "generic", "", (46,), ignored=True),
    _ax(46, "StaticText", "light child"),
    _ax(25, "checkbox", "Agree", properties=[{"name": "checked", "value": {"value": "true"}}, DISABLED]),
    _ax(2, "combobox", "Size", (30,), value={"value": "S"}),
    _ax(30, "MenuListPopup", "", (32,)),
    _ax(32, "option", "S"),
]
for _node in NODES[1:]:
    _node["parentId"] = "0"
HIDDEN = dict.fromkeys((14, 15, 16, 17, 19, 20, 21, 22, 23, 25, 2, 30, 32), 13)
"""The nodes inside host 13's closed root; 46 is the host's light child, shown through a slot: Playwright has it.
The host itself is ignored (no role of its own): its children are the body's in Chromium's full tree."""
BY_ID = {n["nodeId"]: n for n in NODES}


def test_a_section_shows_the_roots_nodes_in_the_snapshot_grammar() -> None:
    starts = tops(NODES, HIDDEN)
    assert starts == {13: ["15", "21", "23", "25", "2"]}, "its top nodes, in document order"
    lines = section(BY_ID, starts[13], HIDDEN, {21: (10, 20, 30, 40)})
    assert lines == [
        '- text: "Email"',
        '- textbox "Email" [ref=s17]: "hi"',
        '- button "Save" [ref=s21] [box=10,20,30,40]',
        '- checkbox "Agree" [checked] [disabled] [ref=s25]',
        '- combobox "Size" [ref=s2]: "S"',
    ]
    tree = parse("\n".join(lines))
    assert [(n.role, n.ref) for n in tree.children][1:] == [
        ("textbox", "s17"), ("button", "s21"), ("checkbox", "s25"), ("combobox", "s2")]  # fmt: skip
    assert shown_ids(BY_ID, starts[13], HIDDEN) == [17, 21, 25, 2]


def test_a_named_node_holds_its_children() -> None:
    nodes = [_ax(1, "generic", "", (2,)), _ax(2, "list", "Steps", (3,)), _ax(3, "listitem", "", (4,)),
             _ax(4, "link", "One", (5,)), _ax(5, "StaticText", "One")]  # fmt: skip
    lines = section({n["nodeId"]: n for n in nodes}, ["2"], dict.fromkeys((2, 3, 4, 5), 1), {})
    assert lines == ['- list "Steps" [ref=s2]:', "  - listitem [ref=s3]:", '    - link "One" [ref=s4]']


PLAYWRIGHT = """- generic [active] [ref=e1] [box=8,21,1264,114]:
  - heading "Top" [level=1] [ref=e2] [box=8,21,1264,37]
  - button "Outside" [ref=e3] [box=8,81,62,21]
  - generic [ref=e4] [box=74,82,382,17]: light child
  - paragraph [ref=e5] [box=8,118,1264,18]: "-"
  - list [ref=e6] [box=8,140,600,100]:
    - listitem [ref=e7] [box=8,140,600,20]: one
    - listitem [ref=e8] [box=8,200,600,20]: three"""


def test_splice_puts_a_section_under_the_deepest_line_holding_its_host() -> None:
    out = splice(PLAYWRIGHT, [((74, 82, 382, 17), ['- button "Save" [ref=s21]'])])
    assert out.splitlines()[3:6] == [
        "  - generic [ref=e4] [box=74,82,382,17]:",
        "    - text: light child",
        '    - button "Save" [ref=s21]',
    ]
    host = next(n for n in parse(out).walk() if n.ref == "e4")
    assert [(n.role, n.text or n.name) for n in host.children] == [("text", "light child"), ("button", "Save")]


def test_splice_keeps_the_order_of_the_page_among_children() -> None:
    out = splice(PLAYWRIGHT, [((8, 170, 600, 20), ["- listitem [ref=s9]: two"])])
    lines = out.splitlines()
    assert lines[lines.index("    - listitem [ref=e7] [box=8,140,600,20]: one") + 1] == "    - listitem [ref=s9]: two"
    assert lines[-1].endswith("three")


def test_splice_without_a_box_appends_at_the_top_level() -> None:
    out = splice(PLAYWRIGHT, [(None, ['- button "Hidden" [ref=s3]', '  - text: "x"'])])
    assert out == PLAYWRIGHT + '\n- button "Hidden" [ref=s3]\n  - text: "x"'
    assert splice(PLAYWRIGHT, []) == PLAYWRIGHT
