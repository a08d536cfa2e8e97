"""The UI tree as pure functions: parsing `uiautomator dump` XML, compact elements in image space, the
token-budgeted element list, and `find`."""
from __future__ import annotations

import re
from collections.abc import Sequence
from xml.sax.saxutils import quoteattr

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lookout.core.tokens import count_tokens
from lookout.device.shown import render_elements
from lookout.device.ui_tree import (
    Bounds,
    UiNode,
    UiParseError,
    element,
    find,
    is_relevant,
    parse_hierarchy,
)

FLAG_ORDER = ("clickable", "long-clickable", "checkable", "checked", "focusable", "focused", "scrollable",
              "selected", "password")  # fmt: skip
BOOLEAN_ATTRS = ("checkable", "checked", "clickable", "enabled", "focusable", "focused", "scrollable",
                 "long-clickable", "password", "selected")  # fmt: skip
DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


def xml_node(
    cls: str, bounds: str, *, text: str = "", rid: str = "", desc: str = "", on: Sequence[str] = (),
    enabled: bool = True, children: Sequence[str] = (), attr_order: Sequence[str] | None = None,
) -> str:  # fmt: skip
    """One `<node>` as uiautomator writes it: every attribute present, the booleans as "true"/"false"."""
    attrs = {"index": "0", "text": text, "resource-id": rid, "class": cls, "package": "com.example",
             "content-desc": desc}  # fmt: skip
    attrs |= {name: "true" if name in on else "false" for name in BOOLEAN_ATTRS}
    attrs["enabled"] = "true" if enabled else "false"
    attrs["bounds"] = bounds
    order = attr_order or list(attrs)
    head = "<node " + " ".join(f"{name}={quoteattr(attrs[name])}" for name in order)
    return f"{head}>{''.join(children)}</node>" if children else f"{head} />"


def hierarchy(*nodes: str) -> str:
    return f'{DECLARATION}<hierarchy rotation="0">{"".join(nodes)}</hierarchy>'


W = "android.widget."
LOGIN = hierarchy(
    xml_node(W + "FrameLayout", "[0,0][1080,2400]", children=[  # 0
        xml_node(W + "LinearLayout", "[0,0][1080,2400]", rid="com.example:id/root", children=[  # 1
            xml_node(W + "TextView", "[90,300][990,420]", text="Welcome"),  # 2
            xml_node(W + "EditText", "[90,600][990,750]", rid="com.example:id/username",
                     on=("clickable", "focusable", "focused")),  # 3
            xml_node(W + "EditText", "[90,800][990,950]", rid="com.example:id/password",
                     on=("clickable", "focusable", "password")),  # 4
            xml_node(W + "CheckBox", "[90,1000][600,1100]", text="Remember me",
                     on=("checkable", "checked", "clickable", "focusable")),  # 5
            xml_node(W + "Button", "[90,1500][990,1650]", text="Log in", rid="com.example:id/login_button",
                     on=("clickable", "focusable")),  # 6
            xml_node(W + "Button", "[90,1700][990,1850]", text="Sign up", on=("clickable",), enabled=False),  # 7
            xml_node(W + "ScrollView", "[0,1900][1080,2300]", rid="com.example:id/news", on=("scrollable",),
                     children=[xml_node(W + "LinearLayout", "[0,1900][1080,2300]")]),  # 8, 9
            xml_node(W + "ImageButton", "[960,60][1060,160]", desc="Settings",
                     on=("selected", "long-clickable", "clickable"),
                     attr_order=["bounds", "selected", "class", "long-clickable", "clickable", "content-desc",
                                 "text", "resource-id", "enabled", "package"]),  # 10
            xml_node(W + "FrameLayout", "[0,2300][1080,2400]"),  # 11: an empty container
        ]),
    ]),
)  # fmt: skip
RELEVANT = [2, 3, 4, 5, 6, 7, 8, 10]
SCREEN = (1080, 2400)


@pytest.fixture(scope="module")
def nodes() -> list[UiNode]:
    return parse_hierarchy(LOGIN)


# --- parsing ---------------------------------------------------------------------------------------------


def test_parse_indexes_every_node_in_document_order(nodes: list[UiNode]) -> None:
    assert [n.index for n in nodes] == list(range(12))
    assert [n.cls for n in nodes] == [
        "FrameLayout", "LinearLayout", "TextView", "EditText", "EditText", "CheckBox", "Button", "Button",
        "ScrollView", "LinearLayout", "ImageButton", "FrameLayout",
    ]  # fmt: skip
    assert [n.depth for n in nodes] == [0, 1, 2, 2, 2, 2, 2, 2, 2, 3, 2, 2]
    assert nodes[6].full_class == "android.widget.Button"
    assert all(n.package == "com.example" for n in nodes)


def test_parse_shortens_ids_and_keeps_the_full_ones(nodes: list[UiNode]) -> None:
    assert [(n.resource_id, n.full_id) for n in nodes if n.full_id] == [
        ("root", "com.example:id/root"), ("username", "com.example:id/username"),
        ("password", "com.example:id/password"), ("login_button", "com.example:id/login_button"),
        ("news", "com.example:id/news"),
    ]  # fmt: skip
    other = parse_hierarchy('<hierarchy><node resource-id="plain_id" /><node resource-id="android:id/content" />'
                            '<node class="NoPackage" /></hierarchy>')  # fmt: skip
    assert [n.resource_id for n in other] == ["plain_id", "content", ""]
    assert [n.cls for n in other] == ["", "", "NoPackage"]


def test_parse_flags_come_in_a_fixed_order(nodes: list[UiNode]) -> None:
    assert nodes[3].flags == ("clickable", "focusable", "focused")
    assert nodes[4].flags == ("clickable", "focusable", "password")
    assert nodes[5].flags == ("clickable", "checkable", "checked", "focusable")
    assert nodes[7].flags == ("clickable", "disabled")
    assert nodes[8].flags == ("scrollable",)
    assert nodes[10].flags == ("clickable", "long-clickable", "selected")  # written in another attribute order
    assert nodes[0].flags == () and nodes[11].flags == ()


def test_parse_bounds(nodes: list[UiNode]) -> None:
    button = nodes[6]
    assert button.bounds == Bounds(90, 1500, 990, 1650)
    assert button.bounds.center == (540, 1575)
    assert button.bounds.contains(90, 1500) and button.bounds.contains(989, 1649)
    assert not button.bounds.contains(990, 1575) and not button.bounds.contains(540, 1499)
    assert button.bounds.to_image(2.4) == Bounds(38, 625, 412, 688)  # round(): 37.5 -> 38, 412.5 -> 412
    odd = parse_hierarchy('<hierarchy><node bounds="[1,2][3" /><node /><node bounds=" [-4,-5][6,7] " />'
                          "</hierarchy>")  # fmt: skip
    assert [n.bounds for n in odd] == [Bounds(0, 0, 0, 0), Bounds(0, 0, 0, 0), Bounds(-4, -5, 6, 7)]


def test_parse_text_around_the_xml_is_skipped(nodes: list[UiNode]) -> None:
    assert parse_hierarchy("WARNING: linker: unused DT entry\r\n" + LOGIN) == nodes
    assert parse_hierarchy(("junk\n" + LOGIN + "\nUI hierchary dumped to: /dev/tty\n").encode()) == nodes
    bare = LOGIN.removeprefix(DECLARATION)
    assert parse_hierarchy("some banner " + bare) == nodes


def test_parse_non_ascii_and_entities_round_trip() -> None:
    text = "Добро пожаловать — 日本語 ✓ 😀 & <b>\"'\n\ttab"
    dump = hierarchy(xml_node(W + "TextView", "[0,0][10,10]", text=text, desc="café"))
    for raw in (dump, dump.encode("utf-8")):
        [only] = parse_hierarchy(raw)
        assert (only.text, only.desc) == (text, "café")
    [ref] = parse_hierarchy("<hierarchy><node text='&#233;&amp;&#x1F600;&lt;&#10;' /></hierarchy>")
    assert ref.text == "é&😀<\n"
    assert element(ref, 1.0)["text"] == "é&😀<\n"


def test_parse_deep_nesting_without_recursion() -> None:
    depth = 5000
    dump = "<hierarchy>" + '<node class="a.V" bounds="[0,0][1,1]">' * depth + "</node>" * depth + "</hierarchy>"
    parsed = parse_hierarchy(dump)
    assert len(parsed) == depth and parsed[-1].depth == depth - 1 and parsed[-1].index == depth - 1


@pytest.mark.parametrize(
    ("dump", "message"),
    [
        ("", "no UI hierarchy"),
        ("   \n", "no UI hierarchy"),
        ("ERROR: null root node returned by UiTestAutomationBridge.", "no UI hierarchy"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "no UI hierarchy"),
        ("<hierarchy><node text='x'", "not well-formed"),
        ("<hierarchy><node></hierarchy>", "not well-formed"),
        (DECLARATION, "not well-formed"),
        (DECLARATION + "<html><body/></html>", "not <hierarchy>"),
        (DECLARATION + '<!DOCTYPE h [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]><hierarchy>'
         "<node text='&b;' /></hierarchy>", "DTD"),
        ('<?xml version="1.0"?><!DOCTYPE hierarchy SYSTEM "file:///etc/passwd"><hierarchy/>', "DTD"),
    ],
)  # fmt: skip
def test_parse_refuses_what_is_not_a_hierarchy(dump: str | bytes, message: str) -> None:
    with pytest.raises(UiParseError, match=message):
        parse_hierarchy(dump)
    assert issubclass(UiParseError, ValueError)


def test_an_empty_hierarchy_has_no_nodes() -> None:
    assert parse_hierarchy(DECLARATION + '<hierarchy rotation="1"/>') == []


# --- relevance and elements ------------------------------------------------------------------------------


def test_relevant_nodes_are_interactive_or_carry_text(nodes: list[UiNode]) -> None:
    assert [n.index for n in nodes if is_relevant(n)] == RELEVANT
    [editable] = parse_hierarchy(hierarchy(xml_node(W + "EditText", "[0,0][9,9]")))
    [blank] = parse_hierarchy(hierarchy(xml_node(W + "TextView", "[0,0][9,9]", text="  ")))
    assert is_relevant(editable) and not is_relevant(blank)


def test_element_is_compact_and_in_image_space(nodes: list[UiNode]) -> None:
    assert element(nodes[6], 2.4) == {
        "index": 6, "class": "Button", "text": "Log in", "id": "login_button", "flags": ["clickable", "focusable"],
        "bounds": [38, 625, 412, 688], "center": [round(540 / 2.4), round(1575 / 2.4)],
    }  # fmt: skip
    assert element(nodes[6], 2.4)["center"] == [225, 656]
    assert element(nodes[10], 2.4) == {
        "index": 10, "class": "ImageButton", "desc": "Settings", "flags": ["clickable", "long-clickable", "selected"],
        "bounds": [400, 25, 442, 67], "center": [421, 46],
    }  # fmt: skip
    assert element(nodes[11], 1.0) == {"index": 11, "class": "FrameLayout", "bounds": [0, 2300, 1080, 2400],
                                       "center": [540, 2350]}  # fmt: skip


# --- the budgeted list -----------------------------------------------------------------------------------


def _self_consistent(result: dict) -> bool:
    return result["tokens"] == count_tokens(orjson.dumps(result).decode())


def test_render_relevant_or_all(nodes: list[UiNode]) -> None:
    relevant = render_elements(nodes, 2.4, screen=SCREEN)
    assert (relevant["total"], relevant["matched"], relevant["shown"]) == (12, 8, 8)
    assert [e["index"] for e in relevant["elements"]] == RELEVANT
    assert relevant["elements"][4] == {"index": 6, "class": "Button", "text": "Log in", "center": [225, 656]}
    assert relevant["elements"][0] == {"index": 2, "text": "Welcome", "flags": "static", "center": [225, 150]}
    assert relevant["elements"][5]["flags"] == "disabled" and relevant["elements"][7]["flags"] == "selected"
    assert "cut" not in relevant and _self_consistent(relevant)
    everything = render_elements(nodes, 2.4, screen=SCREEN, all=True)
    assert (everything["total"], everything["matched"], everything["shown"]) == (12, 12, 12)
    assert [e["index"] for e in everything["elements"]] == list(range(12))
    assert _self_consistent(everything)
    assert list(relevant)[-1] == "tokens"


def test_render_within_max_tokens_states_the_cut(nodes: list[UiNode]) -> None:
    full = render_elements(nodes, 2.4, screen=SCREEN)
    assert render_elements(nodes, 2.4, screen=SCREEN, max_tokens=full["tokens"]) == full  # exactly enough: nothing cut
    floor = render_elements(nodes, 2.4, screen=SCREEN, max_tokens=1)["tokens"]
    for budget in range(floor, full["tokens"]):
        result = render_elements(nodes, 2.4, screen=SCREEN, max_tokens=budget)
        assert result["tokens"] <= budget and _self_consistent(result)
        assert {k: result["cut"][k] for k in ("reason", "omitted", "max_tokens")} == {
            "reason": "max_tokens", "omitted": 8 - result["shown"], "max_tokens": budget}  # fmt: skip
        assert result["cut"]["first_omitted"] == full["elements"][result["shown"]]["index"]
        assert "find" in result["cut"]["get_more"] and "max_tokens" in result["cut"]["get_more"]
        assert [e["index"] for e in result["elements"]] == RELEVANT[: result["shown"]]
        assert (result["total"], result["matched"]) == (12, 8)
    assert render_elements(nodes, 2.4, screen=SCREEN, max_tokens=full["tokens"] - 1)["shown"] < 8


def test_render_with_a_budget_below_the_empty_result(nodes: list[UiNode]) -> None:
    result = render_elements(nodes, 2.4, screen=SCREEN, max_tokens=5)
    assert result["elements"] == [] and result["shown"] == 0
    assert result["cut"]["omitted"] == 8 and result["cut"]["max_tokens"] == 5
    assert result["tokens"] > 5 and _self_consistent(result)
    empty = render_elements([], 1.0, screen=SCREEN, max_tokens=1)
    assert (empty["elements"], empty["total"], "cut" in empty) == ([], 0, False)


# --- find ------------------------------------------------------------------------------------------------


def _found(nodes: Sequence[UiNode], **criteria: object) -> list[int]:
    return [n.index for n in find(nodes, **criteria)]  # type: ignore[arg-type]


def test_find_substrings_case_insensitive(nodes: list[UiNode]) -> None:
    assert _found(nodes, text="LOG IN") == [6]
    assert _found(nodes, text="me") == [2, 5]  # "Welcome", "Remember me"
    assert _found(nodes, resource_id="login") == [6]
    assert _found(nodes, resource_id="com.example:id/USER") == [3]
    assert _found(nodes, desc="settings") == [10]
    assert _found(nodes, class_name="button") == [6, 7, 10]
    assert _found(nodes, class_name="android.widget.EditText") == [3, 4]
    assert _found(nodes, class_name="Button", text="sign") == [7]  # every criterion must match
    assert _found(nodes, text="nowhere") == []


def test_find_with_regexes(nodes: list[UiNode]) -> None:
    assert _found(nodes, text=r"^log\s+IN$", regex=True) == [6]
    assert _found(nodes, class_name=r"^(image)?button$", regex=True) == [6, 7, 10]
    assert _found(nodes, class_name=r"^android\.widget\.(Scroll|Check)", regex=True) == [5, 8]
    assert _found(nodes, resource_id=r"^com\.example:id/(user|pass)", regex=True) == [3, 4]
    assert _found(nodes, desc="^SETTINGS$", regex=True) == [10]
    assert _found(nodes, text="(", regex=False) == []  # a plain substring, not a pattern


def test_find_errors(nodes: list[UiNode]) -> None:
    with pytest.raises(ValueError, match=r"^resource_id: invalid regular expression '\['"):
        find(nodes, resource_id="[", regex=True)
    with pytest.raises(ValueError, match=r"^text: invalid regular expression"):
        find(nodes, text="(", regex=True)
    with pytest.raises(ValueError, match=re.escape("give at least one of text, resource_id, desc, class_name")):
        find(nodes)


# --- properties ------------------------------------------------------------------------------------------

_CHARS = st.one_of(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff"),
    st.sampled_from("&<>\"'\n\t;#"),
)
_TEXT = st.text(_CHARS, max_size=10)
_CLASSES = st.sampled_from(["android.widget.Button", "android.widget.TextView", "android.view.View", "Custom", ""])


@st.composite
def trees(draw: st.DrawFn, depth: int = 0) -> list[dict]:
    """A random forest: each node a dict of its attributes and its children."""
    out = []
    for _ in range(draw(st.integers(0, 3 if depth < 4 else 0))):
        left, right = sorted(draw(st.lists(st.integers(0, 4000), min_size=2, max_size=2)))
        top, bottom = sorted(draw(st.lists(st.integers(0, 4000), min_size=2, max_size=2)))
        out.append({
            "cls": draw(_CLASSES), "text": draw(_TEXT), "desc": draw(_TEXT),
            "on": draw(st.sets(st.sampled_from(FLAG_ORDER))), "enabled": draw(st.booleans()),
            "bounds": (left, top, right, bottom), "shuffle": draw(st.randoms(use_true_random=False)),
            "children": draw(trees(depth + 1)),
        })  # fmt: skip
    return out


def _serialise(tree: list[dict]) -> str:
    parts = []
    for n in tree:
        order = ["index", "text", "resource-id", "class", "package", "content-desc", *BOOLEAN_ATTRS, "bounds"]
        n["shuffle"].shuffle(order)
        parts.append(xml_node(n["cls"], "[{},{}][{},{}]".format(*n["bounds"]), text=n["text"], desc=n["desc"],
                              on=tuple(n["on"]), enabled=n["enabled"], children=[_serialise(n["children"])],
                              attr_order=order))  # fmt: skip
    return "".join(parts)


def _flatten(tree: list[dict], depth: int = 0) -> list[tuple[dict, int]]:
    return [item for n in tree for item in [(n, depth), *_flatten(n["children"], depth + 1)]]


@settings(max_examples=80, deadline=None)
@given(trees())
def test_parse_gives_one_node_per_element_in_document_order(tree: list[dict]) -> None:
    parsed = parse_hierarchy(hierarchy(_serialise(tree)))
    expected = _flatten(tree)
    assert len(parsed) == len(expected)
    for i, (got, (want, depth)) in enumerate(zip(parsed, expected, strict=True)):
        flags = tuple(f for f in FLAG_ORDER if f in want["on"]) + (() if want["enabled"] else ("disabled",))
        assert (got.index, got.depth, got.text, got.desc, got.flags, got.full_class) == (
            i, depth, want["text"], want["desc"], flags, want["cls"])  # fmt: skip
        assert got.bounds == Bounds(*want["bounds"])


@settings(max_examples=60, deadline=None)
@given(trees(), st.floats(1.0, 4.0), st.booleans(), st.integers(1, 1500))
def test_render_never_exceeds_a_budget_the_empty_result_fits(
    tree: list[dict], scale: float, everything: bool, budget: int
) -> None:
    nodes = parse_hierarchy(hierarchy(_serialise(tree)))
    full = render_elements(nodes, scale, screen=SCREEN, all=everything)
    result = render_elements(nodes, scale, screen=SCREEN, all=everything, max_tokens=budget)
    assert _self_consistent(result)
    if result["tokens"] > budget:  # only when even zero elements do not fit
        assert result["shown"] == 0
    assert result["elements"] == full["elements"][: result["shown"]]
    assert result["shown"] + result.get("cut", {}).get("omitted", 0) == result["matched"] == full["matched"]
    assert ("cut" in result) == (result["shown"] < result["matched"])
