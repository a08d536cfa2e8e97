"""Page actions built from requests (lookout.browser.action_kinds.from_request): each kind, each refusal."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from lookout.browser.action_kinds import (
    Action,
    Back,
    Check,
    Click,
    ClickAt,
    DialogAnswer,
    Fill,
    Forward,
    Hover,
    Navigate,
    Press,
    Reload,
    Select,
    Type,
    Uncheck,
    Upload,
    WaitDomQuiet,
    WaitElement,
    WaitNetworkIdle,
    WaitText,
    WaitUrl,
    describe,
    from_request,
)
from lookout.core.errors import BadInput
from lookout.schemas.page import ActionRequest


def build(resolved: tuple[str, ...] = (), **fields: Any) -> Action:
    return from_request(ActionRequest(**fields), resolved)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"action": "navigate", "url": "http://x/a"}, Navigate(url="http://x/a")),
        ({"action": "back", "timeout_ms": 500}, Back(timeout_ms=500)),
        ({"action": "forward"}, Forward()),
        ({"action": "reload"}, Reload()),
        ({"action": "click", "ref": "e1"}, Click(ref="e1")),
        ({"action": "click", "x": 10, "y": 20.5, "obs_id": "o_1"}, ClickAt(x=10, y=20.5, obs_id="o_1")),
        ({"action": "hover", "ref": "e2"}, Hover(ref="e2")),
        ({"action": "check", "ref": "e3"}, Check(ref="e3")),
        ({"action": "uncheck", "ref": "e3"}, Uncheck(ref="e3")),
        ({"action": "fill", "ref": "e4", "text": ""}, Fill(ref="e4", text="")),
        ({"action": "type", "ref": "e4", "text": "hi", "submit": True}, Type(ref="e4", text="hi", submit=True)),
        ({"action": "select", "ref": "e5", "values": ["a", "b"]}, Select(ref="e5", values=("a", "b"))),
        ({"action": "press", "key": "Enter"}, Press(key="Enter")),
        ({"action": "press", "key": "Tab", "ref": "e6"}, Press(key="Tab", ref="e6")),
        ({"action": "wait"}, WaitNetworkIdle()),
        ({"action": "wait", "wait": {"text": "Saved"}}, WaitText(text="Saved")),
        ({"action": "wait", "wait": {"text_gone": "Loading"}}, WaitText(text="Loading", gone=True)),
        ({"action": "wait", "wait": {"url": "/done"}}, WaitUrl(url="/done")),
        ({"action": "wait", "ref": "e7"}, WaitElement(ref="e7")),
        ({"action": "wait", "ref": "e7", "wait": {"state": "hidden"}}, WaitElement(ref="e7", state="hidden")),
        ({"action": "wait", "wait": {"dom_quiet": True}, "timeout_ms": 2000}, WaitDomQuiet(timeout_ms=2000)),
        ({"action": "dialog"}, DialogAnswer()),
        ({"action": "dialog", "accept": True, "text": "yes"}, DialogAnswer(accept=True, text="yes")),
        # fields a kind does not take are ignored, as they always were
        ({"action": "navigate", "url": "http://x/", "ref": "e1", "text": "t"}, Navigate(url="http://x/")),
        ({"action": "click", "ref": "e1", "wait": {"text": "x"}}, Click(ref="e1")),
    ],
)
def test_each_kind(fields: dict[str, Any], expected: object) -> None:
    action = build(**fields)
    assert action == expected and type(action) is type(expected)
    assert action.name == fields["action"]


def test_upload_takes_the_resolved_files() -> None:
    action = build(("/up/a.txt",), action="upload", ref="e8", files=["a.txt"])
    assert action == Upload(ref="e8", files=("/up/a.txt",))


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"action": "navigate"}, "url", "navigate needs a url"),
        ({"action": "navigate", "url": ""}, "url", "navigate needs a url"),
        ({"action": "press"}, "key", "press needs a key"),
        ({"action": "click"}, "ref", "click needs a ref from a snapshot"),
        ({"action": "click", "ref": ""}, "ref", "click needs a ref from a snapshot"),
        ({"action": "hover"}, "ref", "hover needs a ref"),
        ({"action": "check"}, "ref", "check needs a ref"),
        ({"action": "uncheck"}, "ref", "uncheck needs a ref"),
        ({"action": "fill", "text": "x"}, "ref", "fill needs a ref"),
        ({"action": "fill", "ref": "e1"}, "text", "fill needs text"),
        ({"action": "type", "ref": "e1"}, "text", "type needs text"),
        ({"action": "select", "ref": "e1"}, "values", "select needs values"),
        ({"action": "select", "ref": "e1", "values": []}, "values", "select needs values"),
        ({"action": "select", "values": ["a"]}, "ref", "select needs a ref"),
        ({"action": "upload", "ref": "e1"}, "files", "upload needs files"),
        ({"action": "upload"}, "ref", "upload needs a ref"),
        ({"action": "click", "x": 10}, "obs_id", "needs x, y and the obs_id"),
        ({"action": "click", "x": 10, "y": 20}, "obs_id", "needs x, y and the obs_id"),
        ({"action": "click", "x": 10, "obs_id": "o_1"}, "obs_id", "needs x, y and the obs_id"),
        ({"action": "click", "obs_id": "o_1"}, "obs_id", "needs x, y and the obs_id"),
        ({"action": "click", "ref": "e1", "x": 1, "y": 2, "obs_id": "o_1"}, "ref", "not both"),
        ({"action": "wait", "wait": {"text": "a", "url": "/b"}}, "wait", "one condition, not text and url"),
        ({"action": "wait", "ref": "e1", "wait": {"dom_quiet": True}}, "wait", "not ref and dom_quiet"),
        ({"action": "wait", "wait": {"state": "hidden"}}, "ref", "give a ref"),
    ],
)
def test_each_refusal(fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(BadInput) as refused:
        build(**fields)
    assert message in refused.value.message and refused.value.details == {"field": field}


def test_actions_are_frozen_and_keyword_only() -> None:
    click = Click(ref="e1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        click.ref = "e2"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Click("e1")  # type: ignore[call-arg, arg-type]


@pytest.mark.parametrize(
    ("action", "text"),
    [
        (Navigate(url="http://x/a"), "navigate http://x/a"),
        (Back(), "back"),
        (Click(ref="e5"), "click e5"),
        (ClickAt(x=578, y=320.5, obs_id="o_2"), "click at (578, 320.5) of o_2"),
        (Type(ref="e9", text="hi"), "type e9 'hi'"),
        (Select(ref="e3", values=("a",)), "select e3 ['a']"),
        (Upload(ref="e4", files=("/a", "/b")), "upload e4 2 files"),
        (Press(key="Enter"), "press Enter"),
        (Press(key="Tab", ref="e1"), "press e1 Tab"),
        (WaitText(text="Saved"), "wait until 'Saved' is visible"),
        (WaitText(text="Saved", gone=True), "wait until 'Saved' is gone"),
        (WaitUrl(url="/done"), "wait until the url contains /done"),
        (WaitElement(ref="e1", state="hidden"), "wait until e1 is hidden"),
        (WaitNetworkIdle(), "wait until the network is quiet"),
        (DialogAnswer(accept=True, text="yes"), "dialog accept 'yes'"),
        (DialogAnswer(), "dialog dismiss"),
    ],
)
def test_describe(action: Any, text: str) -> None:
    assert describe(action) == text
