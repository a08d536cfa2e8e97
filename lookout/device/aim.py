"""Where an action lands, and the check that the device still shows there what the observation showed.

`aim_*` turn an agent's target (an element of an observation's listing, a point of its image, a swipe) into
device pixels; `verify` then compares the device now with the observation, in one worker-thread step: the
screen's size and rotation, the focused window, and the pixels of the target's box in a fresh capture
against the observation's reference frame (lookout.device.verify). Any difference is a Conflict that says what
changed; nothing is sent to the device then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from lookout.core.errors import BadInput, Conflict, NotFound
from lookout.core.scaling import Scale
from lookout.device.info import DeviceInfo
from lookout.device.layers import Stack
from lookout.device.observations import DeviceObservations, Observation, turned
from lookout.device.observer import Observer
from lookout.device.reach import describe_hit, direction_swipe, dump_bars, node_at, reachable, safe_area
from lookout.device.ui_tree import Bounds, UiNode
from lookout.device.verify import (
    Box,
    Difference,
    difference,
    find_shift,
    point_box,
    reference,
    region,
    region_of_rows,
    rows_for,
)  # fmt: skip

OBSERVE_AGAIN = "nothing was sent: observe again (POST /screenshot with ui=true) and act on what it shows"


@dataclass(frozen=True, slots=True)
class Aim:
    """An action's target in device pixels, the box of the observation's image it is checked on (None: a
    swipe by direction, checked on the window and rotation only), and what it hits when known."""

    point: tuple[int, int]
    box: Box | None
    hit: dict[str, Any] | None = None
    end: tuple[int, int] | None = None
    """A swipe's end."""
    facts: dict[str, Any] = field(default_factory=dict)

    def answer(self, scale: Scale) -> dict[str, Any]:
        """The answer's fields: the point in image and device pixels, and the element hit."""
        out: dict[str, Any] = {"point": [scale.to_image(self.point[0]), scale.to_image(self.point[1])],
                               "device_point": list(self.point)}  # fmt: skip
        if self.hit is not None:
            out["element"] = self.hit
        return out


def screen_of(obs: Observation) -> tuple[int, int]:
    return obs.scale.device_width, obs.scale.device_height


def to_device(scale: Scale, x: float, y: float) -> tuple[int, int]:
    """An image point of the observation in device pixels; outside the image is a BadInput."""
    if not scale.contains_image_point(x, y):
        raise BadInput(f"({x:g}, {y:g}) is outside the image ({scale.image_width}x{scale.image_height}): "
                       "coordinates are in the screenshot's pixels")  # fmt: skip
    return scale.to_device(x, y)


def element_of(obs: Observation, nodes: Sequence[UiNode] | None, index: int) -> UiNode:
    """Element `index` of the observation's listing (never of another observation's)."""
    if nodes is None:
        raise Conflict(f"observation {obs.obs_id} has no UI listing, so element indices cannot refer to it (an "
                       f"index of an older listing would land on a screen that listing never showed): GET "
                       f"/ui?obs_id={obs.obs_id} for its elements, or name the obs_id of the listing you used",
                       obs_id=obs.obs_id)  # fmt: skip
    if not 0 <= index < len(nodes):
        raise NotFound(f"observation {obs.obs_id} has no element {index} (indices 0-{len(nodes) - 1})")
    return nodes[index]


def aim_element(obs: Observation, nodes: Sequence[UiNode] | None, index: int, info: DeviceInfo) -> Aim:
    """The middle of the element's part on the screen and outside the system bars."""
    node = element_of(obs, nodes, index)
    nodes = nodes or []
    screen = screen_of(obs)
    b = node.bounds
    where = f"element {node.index} of observation {obs.obs_id} (bounds [{b.left},{b.top}][{b.right},{b.bottom}])"
    if not node.visible(screen):
        raise Conflict(f"{where} is not on the screen (no visible area): a tap there would land elsewhere. Use an "
                       "element of the listing (GET /ui, or find, which give the visible node)")  # fmt: skip
    area = safe_area(*screen, [*dump_bars(nodes), *info.bars])
    part = reachable(b, area)
    if part is None:
        raise Conflict(f"{where} has too little of it on the screen outside the system bars (the free area is "
                       f"[{area.left},{area.top}][{area.right},{area.bottom}]) for a finger to reach: scroll it "
                       "into view, then observe again")  # fmt: skip
    free = Stack(nodes, screen).free_part(node, part)
    if free.part is None:
        cover = free.cover
        what = "something drawn above it" if cover is None else _named(nodes, cover, screen)
        raise Conflict(f"{where} is covered by {what}: a tap there would land on that, not on the element. "
                       "Nothing was sent: act on what covers it (it comes first in the listing), or close it and "
                       "observe again", obs_id=obs.obs_id, covered_by=None if cover is None else cover.index)  # fmt: skip
    box = _image_box(obs.scale, free.part)
    return Aim(free.part.center, box, describe_hit(nodes, node, screen))


def _named(nodes: Sequence[UiNode], node: UiNode, screen: tuple[int, int]) -> str:
    """A node as a refusal names it: `element 12 (Button "Delete")`."""
    hit = describe_hit(nodes, node, screen)
    text = hit.get("text") or hit.get("inner_text")
    return f"element {node.index} ({hit['class']}{f' {text!r}' if text else ''})"


def aim_point(obs: Observation, nodes: Sequence[UiNode] | None, x: float, y: float) -> Aim:
    """A point of the observation's image, checked on the element there when the observation has a listing
    (a few pixels around a point can look the same in the next row of a list), else on a box around it."""
    point = to_device(obs.scale, x, y)
    screen = screen_of(obs)
    hit = node_at(nodes, *point, screen) if nodes is not None else None
    if nodes is not None and hit is not None:
        stack = Stack(nodes, screen)
        cover = stack.cover_at(hit, *point)
        if cover is not None:  # what is drawn above takes the touch
            hit = node_at(nodes[cover.index : stack.end[cover.index]], *point, screen) or cover
    part = reachable(hit.bounds, Bounds(0, 0, *screen)) if hit is not None else None
    box = _image_box(obs.scale, part) if part else point_box(x, y, obs.scale.image_width, obs.scale.image_height)
    return Aim(point, box, None if hit is None else describe_hit(nodes or [], hit, screen))


def aim_swipe(obs: Observation, nodes: Sequence[UiNode] | None, info: DeviceInfo, *,
              points: tuple[float, float, float, float] | None, direction: str | None,
              distance: float) -> Aim:  # fmt: skip
    """A swipe between two image points (checked around its start), or by direction inside the area outside
    the system bars (checked on the window and rotation only: it aims at no pixel of the observation)."""
    if points is not None:
        start = aim_point(obs, nodes, points[0], points[1])
        return Aim(start.point, start.box, start.hit, end=to_device(obs.scale, points[2], points[3]))
    assert direction is not None
    bars = [*dump_bars(nodes or []), *info.bars]
    begin, end = direction_swipe(*screen_of(obs), bars, direction, distance)
    return Aim(begin, None, end=end)


def verify(obs: Observation, aim: Aim, info: DeviceInfo, store: DeviceObservations, observer: Observer) -> None:
    """Raise Conflict unless the device, as `info` says it is now and as a fresh capture shows it, still
    shows what `obs` showed where `aim` lands."""
    reason = turned(obs, info.width, info.height, info.rotation)
    if reason is not None:
        raise Conflict(f"the device changed since observation {obs.obs_id} ({reason}); {OBSERVE_AGAIN}",
                       obs_id=obs.obs_id, rotation=info.rotation)  # fmt: skip
    if obs.window != info.window:
        raise Conflict(f"another window is in front: {info.window or 'none'} (observation {obs.obs_id} showed "
                       f"{obs.window or 'none'}); {OBSERVE_AGAIN}", obs_id=obs.obs_id, window=info.window)  # fmt: skip
    if aim.box is None:
        return
    ref = store.reference(obs)
    if ref is None:
        raise Conflict(f"observation {obs.obs_id} has no reference frame to check the screen against (it was taken "
                       f"by an older lookout); {OBSERVE_AGAIN}", obs_id=obs.obs_id)  # fmt: skip
    seen = ref.crop((aim.box.left, aim.box.top, aim.box.right, aim.box.bottom))
    if _rows_show(seen, obs, aim.box, observer):
        return
    frame = observer.recent(obs.serial).image
    found = difference(seen, region(frame, obs.scale, aim.box), aim.box)
    if found is None:
        return
    found = Difference(found.changed, found.area, find_shift(ref, reference(frame, obs.scale), aim.box))
    raise Conflict(f"the screen changed since observation {obs.obs_id} where the action would land: "
                   f"{found.describe()}; {OBSERVE_AGAIN}", obs_id=obs.obs_id, changed=found.changed,
                   box=[aim.box.left, aim.box.top, aim.box.right, aim.box.bottom], shift=found.shift)  # fmt: skip


def _rows_show(seen: Image.Image, obs: Observation, box: Box, observer: Observer) -> bool:
    """Whether the rows of a new capture around `box` (only those cross the link) show what the observation
    showed there; False when they do not, or cannot be had (a whole capture then decides, and says what
    changed)."""
    layout = observer.layout(obs.serial)
    if layout is None or observer.reusable(obs.serial) is not None:
        return False
    first, last = rows_for(layout.height, obs.scale, box)
    rows = observer.rows(obs.serial, first, last)
    if rows is None:
        return False
    return difference(seen, region_of_rows(rows, first, layout.height, obs.scale, box), box) is None


def _image_box(scale: Scale, part: Bounds) -> Box:
    """A device rectangle as the box of image pixels it covers."""
    b = part.to_image(scale.factor)
    return Box(b.left, b.top, max(b.right, b.left + 1), max(b.bottom, b.top + 1)).clipped(
        scale.image_width, scale.image_height
    )
