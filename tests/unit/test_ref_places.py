"""The refs' boxes read apart (lookout.browser.ref_places) placed on a parsed snapshot: every node with a ref of
the top document gets its own box, or the read says it cannot place them all."""

from __future__ import annotations

from lookout.browser.aria import parse, placed, placed_box

RAW = """- generic [ref=e1]:
  - heading "Orders" [level=1] [ref=e2]
  - text: Total
  - paragraph: Hidden text
  - iframe [ref=e3]:
    - button "Inside" [ref=f1e2]
  - button "Closed" [ref=s4]"""


def _by_ref(places: str) -> tuple[bool, dict[str, tuple[int, int, int, int] | None]]:
    root = parse(RAW)
    done = placed(root, places)
    return done, {node.ref or node.role: node.box for node in root.walk()}


def test_each_ref_of_the_top_document_gets_its_own_box() -> None:
    done, boxes = _by_ref("e1 0 0 1280 900 e3 10 500 300 200 e2 8 -40 400 37 e9 1 2 3 4 s4 5 5 5 5")
    assert done
    assert boxes["e1"] == (0, 0, 1280, 900) and boxes["e2"] == (8, -40, 400, 37) and boxes["e3"] == (10, 500, 300, 200)
    assert boxes["s4"] == (5, 5, 5, 5)
    assert boxes["paragraph"] is None and boxes["text"] is None, "nodes without a ref are placed by their parent"
    assert boxes["f1e2"] is None, "a frame's nodes are in a document of their own"
    assert placed(parse(RAW.replace("[ref=e", "[ref=f2e")), "f2e1 0 0 1 1 f2e2 0 0 1 1 f2e3 0 0 1 1 s4 0 0 1 1"), (
        "the top document's refs are f2e.. after Playwright made its main frame again")


def test_a_ref_without_a_box_or_with_two_places_nothing_for_sure() -> None:
    assert not _by_ref("e1 0 0 1280 900 e2 8 40 400 37 s4 1 1 1 1")[0], "e3 has none"
    done, boxes = _by_ref("e1 0 0 1280 900 e2 8 40 400 37 e3 1 1 1 1 s4 1 1 1 1 e2 9 9 9 9")
    assert not done and boxes["e2"] is None, "two elements say they are e2: neither box is known to be its own"
    assert not _by_ref("")[0]


def test_a_malformed_answer_places_nothing() -> None:
    assert not _by_ref("e1 0 0 1280 900 e2 8 40 400 37 e3 1 1 1 s4 1 1 1 1")[0]
    assert not _by_ref("e1 0 0 1280 900 e2 8 x 400 37 e3 1 1 1 1 s4 1 1 1 1")[0]


def test_a_view_places_a_node_by_its_own_box_only_with_a_ref() -> None:
    root = parse(RAW.replace("[ref=e2]", "[ref=e2] [box=1,2,3,4]").replace("- paragraph:", "- paragraph [box=5,6,7,8]:"))
    boxes = {node.ref or node.role: placed_box(node) for node in root.walk()}
    assert boxes["e2"] == (1, 2, 3, 4)
    assert boxes["paragraph"] is None, "a node without a ref is placed by its parent"
