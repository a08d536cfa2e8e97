"""Page actions as typed records: one frozen class per kind of action, holding only what that kind takes.

`from_request` is the one place a request (lookout.schemas.page.ActionRequest) becomes an action: it refuses
what an action of that kind cannot run (a click with neither a ref nor x, y and obs_id, a fill without
text, a wait on two conditions) with a BadInput naming the field, before anything runs. Fields a kind does
not take are ignored. `describe` is the one place an action becomes its short text form (the timeline's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from lookout.core.errors import BadInput
from lookout.schemas.page import ActionName, ActionRequest, WaitSpec

TIMEOUT_MS = 10_000
ElementState = Literal["attached", "detached", "visible", "hidden"]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Timed:
    name: ClassVar[ActionName]
    timeout_ms: int = TIMEOUT_MS


@dataclass(frozen=True, slots=True, kw_only=True)
class OnElement(_Timed):
    """An action on the element `ref` of the page's last snapshot (checked to be there before it runs)."""

    ref: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Navigate(_Timed):
    name: ClassVar[ActionName] = "navigate"
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Back(_Timed):
    name: ClassVar[ActionName] = "back"


@dataclass(frozen=True, slots=True, kw_only=True)
class Forward(_Timed):
    name: ClassVar[ActionName] = "forward"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reload(_Timed):
    name: ClassVar[ActionName] = "reload"


@dataclass(frozen=True, slots=True, kw_only=True)
class Click(OnElement):
    name: ClassVar[ActionName] = "click"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClickAt(_Timed):
    """A click at image coordinates of the viewport screenshot `obs_id`."""

    name: ClassVar[ActionName] = "click"
    x: float
    y: float
    obs_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Hover(OnElement):
    name: ClassVar[ActionName] = "hover"


@dataclass(frozen=True, slots=True, kw_only=True)
class Check(OnElement):
    name: ClassVar[ActionName] = "check"


@dataclass(frozen=True, slots=True, kw_only=True)
class Uncheck(OnElement):
    name: ClassVar[ActionName] = "uncheck"


@dataclass(frozen=True, slots=True, kw_only=True)
class Fill(OnElement):
    """Replace the field's value with `text` (then press Enter when `submit`)."""

    name: ClassVar[ActionName] = "fill"
    text: str
    submit: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Type(OnElement):
    """Type `text` key by key into the element (then press Enter when `submit`)."""

    name: ClassVar[ActionName] = "type"
    text: str
    submit: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Select(OnElement):
    name: ClassVar[ActionName] = "select"
    values: tuple[str, ...]
    """Option labels or values."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Upload(OnElement):
    name: ClassVar[ActionName] = "upload"
    files: tuple[str, ...]
    """Paths, already checked to be inside the upload directory."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Press(_Timed):
    """Press `key` on the element `ref`, or on the page (whatever has the focus) without one."""

    name: ClassVar[ActionName] = "press"
    key: str
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitText(_Timed):
    """Until `text` is visible (`gone`: until it is hidden or gone)."""

    name: ClassVar[ActionName] = "wait"
    text: str
    gone: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitUrl(_Timed):
    """Until the page's URL contains `url`."""

    name: ClassVar[ActionName] = "wait"
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitElement(_Timed):
    """Until the element `ref` is in `state` (it may not be there yet: its ref is not checked first)."""

    name: ClassVar[ActionName] = "wait"
    ref: str
    state: ElementState = "visible"


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitDomQuiet(_Timed):
    """Until the DOM has not changed for a moment."""

    name: ClassVar[ActionName] = "wait"


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitNetworkIdle(_Timed):
    """Until the page's network is quiet."""

    name: ClassVar[ActionName] = "wait"


@dataclass(frozen=True, slots=True, kw_only=True)
class DialogAnswer:
    """How to answer the page's next dialog: accept (with `text` for a prompt), else dismiss."""

    name: ClassVar[ActionName] = "dialog"
    accept: bool = False
    text: str | None = None


Action = (
    Navigate | Back | Forward | Reload | Click | ClickAt | Hover | Check | Uncheck | Fill | Type | Select | Upload
    | Press | WaitText | WaitUrl | WaitElement | WaitDomQuiet | WaitNetworkIdle | DialogAnswer
)  # fmt: skip
NAVIGATIONS = (Navigate, Back, Forward, Reload)
"""Actions meant to change the page's document."""
_PLAIN: dict[str, type[Back | Forward | Reload]] = {"back": Back, "forward": Forward, "reload": Reload}
_ON_ELEMENT: dict[str, type[Click | Hover | Check | Uncheck]] = {
    "click": Click, "hover": Hover, "check": Check, "uncheck": Uncheck,
}  # fmt: skip


def from_request(body: ActionRequest, files: tuple[str, ...] = ()) -> Action:
    """The action a request asks for; `files` are its upload files, already resolved in the upload directory."""
    name, timeout = body.action, body.timeout_ms
    if name == "dialog":
        return DialogAnswer(accept=body.accept, text=body.text)
    if name == "navigate":
        return Navigate(url=_needed(body.url, "navigate needs a url", "url"), timeout_ms=timeout)
    if name in _PLAIN:
        return _PLAIN[name](timeout_ms=timeout)
    if name == "press":
        key = _needed(body.key, "press needs a key (Enter, Tab, Control+A, ...)", "key")
        return Press(key=key, ref=body.ref or None, timeout_ms=timeout)
    if name == "wait":
        return _wait(body)
    if name == "click" and (body.x is not None or body.y is not None or body.obs_id is not None):
        return _click_at(body)
    ref = _needed(body.ref, f"{name} needs a ref from a snapshot", "ref")
    if name in ("fill", "type"):
        if body.text is None:
            raise BadInput(f"{name} needs text", field="text")
        if name == "fill":
            return Fill(ref=ref, text=body.text, submit=body.submit, timeout_ms=timeout)
        return Type(ref=ref, text=body.text, submit=body.submit, timeout_ms=timeout)
    if name == "select":
        values = tuple(body.values or ())
        if not values:
            raise BadInput("select needs values (option labels or values)", field="values")
        return Select(ref=ref, values=values, timeout_ms=timeout)
    if name == "upload":
        if not files:
            raise BadInput("upload needs files", field="files")
        return Upload(ref=ref, files=files, timeout_ms=timeout)
    return _ON_ELEMENT[name](ref=ref, timeout_ms=timeout)


def _needed(value: str | None, message: str, field: str) -> str:
    if not value:
        raise BadInput(message, field=field)
    return value


def _click_at(body: ActionRequest) -> ClickAt:
    if body.ref:
        raise BadInput("click takes a ref, or x, y and obs_id (a screenshot's), not both", field="ref")
    if body.x is None or body.y is None or not body.obs_id:
        raise BadInput("a click at a point needs x, y and the obs_id of the screenshot they are in", field="obs_id")
    return ClickAt(x=body.x, y=body.y, obs_id=body.obs_id, timeout_ms=body.timeout_ms)


def _wait(body: ActionRequest) -> Action:
    """A wait on one condition: text, its disappearance, a URL, the element `ref`, a quiet DOM; none: the
    network is quiet."""
    spec, ref, timeout = body.wait or WaitSpec(), body.ref, body.timeout_ms
    conditions = {"text": spec.text, "text_gone": spec.text_gone, "url": spec.url, "ref": ref or None,
                  "dom_quiet": spec.dom_quiet or None}  # fmt: skip
    given = [name for name, value in conditions.items() if value is not None]
    if len(given) > 1:
        raise BadInput(f"wait takes one condition, not {' and '.join(given)}", field="wait")
    if spec.state is not None and not ref:
        raise BadInput("wait.state is the state of the action's ref: give a ref", field="ref")
    if spec.text is not None:
        return WaitText(text=spec.text, timeout_ms=timeout)
    if spec.text_gone is not None:
        return WaitText(text=spec.text_gone, gone=True, timeout_ms=timeout)
    if spec.url is not None:
        return WaitUrl(url=spec.url, timeout_ms=timeout)
    if ref:
        return WaitElement(ref=ref, state=spec.state or "visible", timeout_ms=timeout)
    if spec.dom_quiet:
        return WaitDomQuiet(timeout_ms=timeout)
    return WaitNetworkIdle(timeout_ms=timeout)


def describe(action: Action) -> str:
    """An action in a few words: `click e12`, `type e3 'hello'`, `navigate https://…`, `wait until 'Saved' is visible`."""
    match action:
        case Navigate(url=url):
            detail = url
        case ClickAt(x=x, y=y, obs_id=obs_id):
            detail = f"at ({x:g}, {y:g}) of {obs_id}"
        case Fill() | Type():
            detail = f"{action.ref} {action.text!r}"
        case Select(ref=ref, values=values):
            detail = f"{ref} {list(values)!r}"
        case Upload(ref=ref, files=files):
            detail = f"{ref} {len(files)} files"
        case Press(key=key, ref=ref):
            detail = f"{ref} {key}" if ref else key
        case WaitText(text=text, gone=gone):
            detail = f"until {text!r} is {'gone' if gone else 'visible'}"
        case WaitUrl(url=url):
            detail = f"until the url contains {url}"
        case WaitElement(ref=ref, state=state):
            detail = f"until {ref} is {state}"
        case WaitDomQuiet():
            detail = "until the DOM is quiet"
        case WaitNetworkIdle():
            detail = "until the network is quiet"
        case DialogAnswer(accept=accept, text=text):
            detail = ("accept" + (f" {text!r}" if text is not None else "")) if accept else "dismiss"
        case OnElement(ref=ref):
            detail = ref
        case _:
            detail = ""
    return f"{action.name} {detail}" if detail else action.name
