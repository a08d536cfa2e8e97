"""The UI tree: parsing uiautomator dumps, the compact element list within a budget, find, set-of-marks."""
from __future__ import annotations

import re
from xml.sax.saxutils import quoteattr

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from app.core.tokens import count_tokens
from app.device.marks import draw_marks
from app.device.ui_tree import Bounds, UiParseError, element, find, is_relevant, parse_hierarchy, render_elements

ATTRS = ('checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" '
         'scrollable="false" long-clickable="false" password="false" selected="false"')  # fmt: skip


def node(cls: str, bounds: str, text: str = "", rid: str = "", desc: str = "", children: str = "", **flags: str) -> str:
    attrs = ATTRS
    for name, value in flags.items():
        attrs = re.sub(rf'(?<![\w-]){name}="\w+"', f'{name}="{value}"', attrs)
    head = (f'<node index="0" text={quoteattr(text)} resource-id="{rid}" class="{cls}" package="com.example" '
            f'content-desc={quoteattr(desc)} {attrs} bounds="{bounds}"')  # fmt: skip
    return f"{head}>{children}</node>" if children else f"{head} />"


LOGIN = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    + node("android.widget.FrameLayout", "[0,0][1080,2400]", children=node(
        "android.widget.LinearLayout", "[0,0][1080,2400]", children="".join([
            node("android.widget.TextView", "[100,200][980,300]", text="Welcome, é & <you>"),
            node("android.widget.EditText", "[90,500][990,620]", rid="com.example:id/username", focusable="true",
                 focused="true"),
            node("android.widget.EditText", "[90,700][990,820]", rid="com.example:id/password", password="true"),
            node("android.widget.Button", "[90,1500][990,1650]", text="Log in", rid="com.example:id/login",
                 clickable="true"),
            node("android.widget.Button", "[90,1700][990,1850]", text="Register", enabled="false"),
            node("android.widget.CheckBox", "[90,1900][500,2000]", text="Remember me", checkable="true",
                 checked="true"),
            node("android.widget.ImageButton", "[950,40][1050,140]", desc="Settings", clickable="true"),
            node("android.widget.ScrollView", "[0,2100][1080,2400]", scrollable="true",
                 children=node("android.view.View", "[0,2100][1080,2400]")),
        ])))  # fmt: skip
    + "</hierarchy>"
)


def test_parse_gives_every_node_in_document_order() -> None:
    nodes = parse_hierarchy(LOGIN)
    assert [n.cls for n in nodes] == ["FrameLayout", "LinearLayout", "TextView", "EditText", "EditText", "Button",
                                      "Button", "CheckBox", "ImageButton", "ScrollView", "View"]  # fmt: skip
    assert [n.index for n in nodes] == list(range(11))
    assert [n.depth for n in nodes] == [0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3]
    assert nodes[2].text == "Welcome, é & <you>"
    assert (nodes[3].resource_id, nodes[3].full_id, nodes[3].flags) == (
        "username", "com.example:id/username", ("focusable", "focused"))  # fmt: skip
    assert nodes[4].flags == ("password",)
    assert nodes[6].flags == ("disabled",)
    assert nodes[7].flags == ("checkable", "checked")
    assert nodes[5].bounds == Bounds(90, 1500, 990, 1650) and nodes[5].bounds.center == (540, 1575)


def test_relevant_nodes_are_interactive_or_carry_text() -> None:
    nodes = parse_hierarchy(LOGIN)
    assert [n.index for n in nodes if is_relevant(n)] == [2, 3, 4, 5, 6, 7, 8, 9]


def test_element_is_compact_and_in_image_space() -> None:
    button = parse_hierarchy(LOGIN)[5]
    assert element(button, 2.4) == {"index": 5, "class": "Button", "text": "Log in", "id": "login",
                                    "flags": ["clickable"], "bounds": [38, 625, 412, 688], "center": [225, 656]}  # fmt: skip
    assert element(parse_hierarchy(LOGIN)[10], 1.0) == {"index": 10, "class": "View",
                                                        "bounds": [0, 2100, 1080, 2400], "center": [540, 2250]}  # fmt: skip


def test_render_counts_its_own_tokens_and_states_the_cut() -> None:
    nodes = parse_hierarchy(LOGIN)
    full = render_elements(nodes, 2.4, header={"obs_id": "o_1"})
    assert (full["total"], full["matched"], full["shown"], "cut" in full) == (11, 8, 8, False)
    assert full["tokens"] == count_tokens(orjson.dumps(full).decode())
    assert render_elements(nodes, 2.4, all=True)["shown"] == 11
    cut = render_elements(nodes, 2.4, max_tokens=120, header={"obs_id": "o_1"})
    assert cut["tokens"] <= 120 and cut["tokens"] == count_tokens(orjson.dumps(cut).decode())
    assert cut["cut"] == {"reason": "max_tokens", "omitted": 8 - cut["shown"], "max_tokens": 120}
    assert [e["index"] for e in cut["elements"]] == [2, 3, 4, 5, 6, 7, 8, 9][: cut["shown"]]


def test_find_by_each_criterion() -> None:
    nodes = parse_hierarchy(LOGIN)
    assert [n.index for n in find(nodes, text="LOG IN")] == [5]
    assert [n.index for n in find(nodes, resource_id="com.example:id/password")] == [4]
    assert [n.index for n in find(nodes, resource_id="user")] == [3]
    assert [n.index for n in find(nodes, desc="settings")] == [8]
    assert [n.index for n in find(nodes, class_name="android.widget.Button")] == [5, 6]
    assert [n.index for n in find(nodes, class_name="button")] == [5, 6, 8]
    assert [n.index for n in find(nodes, class_name="^Button$", text="^(log|reg)", regex=True)] == [5, 6]
    with pytest.raises(ValueError, match="text: invalid regular expression"):
        find(nodes, text="(", regex=True)
    with pytest.raises(ValueError, match="at least one"):
        find(nodes)


@pytest.mark.parametrize(
    ("dump", "message"),
    [("", "no UI hierarchy"), ("ERROR: null root node returned by UiTestAutomationBridge.", "no UI hierarchy"),
     ("<hierarchy><node", "not well-formed"), ("<?xml version='1.0'?><root/>", "not <hierarchy>"),
     ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><hierarchy/>', "DTD")],
)  # fmt: skip
def test_what_is_not_a_hierarchy_is_refused(dump: str, message: str) -> None:
    with pytest.raises(UiParseError, match=message):
        parse_hierarchy(dump)


def test_text_before_the_xml_is_skipped() -> None:
    assert len(parse_hierarchy("WARNING: linker: something\n" + LOGIN)) == 11


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)


@st.composite
def trees(draw: st.DrawFn, depth: int = 0) -> list[tuple[str, str, bool, tuple[int, int, int, int], list]]:
    count = draw(st.integers(0, 3 if depth < 3 else 0))
    out = []
    for _ in range(count):
        box = tuple(sorted(draw(st.lists(st.integers(0, 3000), min_size=4, max_size=4))))
        out.append((draw(_TEXT), draw(_TEXT), draw(st.booleans()), (box[0], box[1], box[2], box[3]),
                    draw(trees(depth + 1))))  # fmt: skip
    return out


def _xml(tree: list) -> str:
    return "".join(node("android.view.View", f"[{b[0]},{b[1]}][{b[2]},{b[3]}]", text=text, desc=desc,
                        clickable="true" if click else "false", children=_xml(kids))
                   for text, desc, click, b, kids in tree)  # fmt: skip


def _flatten(tree: list) -> list:
    return [item for entry in tree for item in [entry, *_flatten(entry[4])]]


@settings(max_examples=60, deadline=None)
@given(trees(), st.integers(20, 400))
def test_parsing_and_budget_properties(tree: list, budget: int) -> None:
    nodes = parse_hierarchy(f"<?xml version='1.0' ?><hierarchy>{_xml(tree)}</hierarchy>")
    flat = _flatten(tree)
    assert [(n.text, n.desc, "clickable" in n.flags) for n in nodes] == [(t, d, c) for t, d, c, _, _ in flat]
    assert [(n.bounds.left, n.bounds.top, n.bounds.right, n.bounds.bottom) for n in nodes] == [e[3] for e in flat]
    empty_cost = render_elements([], 1.7)["tokens"] + 30
    result = render_elements(nodes, 1.7, all=True, max_tokens=max(budget, empty_cost))
    assert result["tokens"] <= max(budget, empty_cost)
    assert result["tokens"] == count_tokens(orjson.dumps(result).decode())


def test_marks_outline_boxes_and_leave_the_rest() -> None:
    image = Image.new("RGB", (200, 300), (250, 250, 250))
    marked = draw_marks(image, [(3, Bounds(20, 30, 120, 80)), (12, Bounds(150, 250, 260, 400)),
                                (7, Bounds(50, 50, 50, 90))])  # fmt: skip
    assert marked.size == image.size and marked is not image
    assert marked.getpixel((70, 79)) != (250, 250, 250)  # the bottom edge of the first box
    assert marked.getpixel((199, 299)) != (250, 250, 250)  # the second box, clipped at the image's corner
    assert marked.getpixel((100, 200)) == (250, 250, 250)  # far from both
    assert image.getpixel((70, 79)) == (250, 250, 250)  # the original is untouched
