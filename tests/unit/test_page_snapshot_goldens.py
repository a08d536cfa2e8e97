"""lookout's parse and views of real snapshots give what they gave before their speed work: the raw texts are
Playwright's `aria_snapshot(mode="ai", boxes=True)` of bench/changing_pages.py's clock, rows and animation and of
Python's library/functions.html in Chromium; each `*.before.json.gz` holds the tree and the answers the code gave
before issue 45's parse and view changes (the parser of commit 2faf0ca), for the options below."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from lookout.browser import views
from lookout.browser.aria import AriaNode, parse
from lookout.browser.snapshot_view import PageContext, SnapshotOptions

DATA = Path(__file__).resolve().parent.parent / "data" / "page_snapshots"
PAGES = ("clock", "rows", "animation", "functions")
OPTIONS = {"default": SnapshotOptions(), "viewport_only": SnapshotOptions(viewport_only=True),
           "interactive_only": SnapshotOptions(interactive_only=True),
           "tight": SnapshotOptions(max_elements=40, max_tokens=800), "full": SnapshotOptions(full=True)}  # fmt: skip
CTX = PageContext("http://127.0.0.1/page", "Page")


def _raw(name: str) -> str:
    return gzip.decompress((DATA / f"{name}.txt.gz").read_bytes()).decode()


def _before(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(gzip.decompress((DATA / f"{name}.before.json.gz").read_bytes()))
    return loaded


def _tree(node: AriaNode) -> list[Any]:
    return [node.role, node.name, node.ref, node.box and list(node.box), node.flags, node.text, node.props,
            [_tree(child) for child in node.children]]  # fmt: skip


@pytest.mark.parametrize("name", PAGES)
def test_a_real_snapshot_parses_to_the_tree_it_did(name: str) -> None:
    assert _tree(parse(_raw(name))) == _before(name)["tree"]


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("option", OPTIONS)
def test_a_real_snapshots_view_is_the_answer_it_was(name: str, option: str) -> None:
    views.forget_answers()
    answer = views.snapshot_text(_raw(name), OPTIONS[option], CTX, None)
    before = _before(name)["views"][option]
    assert answer.text == before["text"]
    assert answer.metadata == before["metadata"]
    assert answer.by_position == before["by_position"]
    assert sorted(answer.refs) == before["refs"]
