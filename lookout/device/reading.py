"""Reading a device's screen in a worker thread: a screenshot (with its UI dump when asked), and a UI dump
joined to an earlier screenshot only while the device still shows what it showed, else a new observation.

A UI dump joins an earlier screenshot only while the device still shows what it showed: the screenshot at
most a few seconds old, the same size, rotation and focused window after the dump, and a capture taken
after the dump showing the screenshot's pixels (a change inside the same window, a scroll, a dialog that
opened); otherwise a 409 that says to observe again. A listing asked for an observation is that
observation's screen, never a newer one's elements under the older id.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from lookout.core.errors import BackendFailure, Conflict
from lookout.core.events import EventBus
from lookout.core.images import ImageFormat, encode, resize
from lookout.core.scaling import fit, same_shape
from lookout.device.adb import Adb
from lookout.device.capture import BLACK_WARNING, is_black
from lookout.device.info import INFO_COMMAND, DeviceInfo, parse_info
from lookout.device.marks import draw_marks
from lookout.device.observations import DeviceObservations, Observation, join_refusal
from lookout.device.observer import Observer
from lookout.device.shown import uncovered
from lookout.device.ui_tree import UiNode, UiParseError, parse_hierarchy
from lookout.device.verify import Box, difference, reference
from lookout.timeline.recording import Recorder

T = TypeVar("T")


@dataclass(frozen=True)
class AdbLink:
    """What every device shares: the adb server, its threads, the observation store, the screen reader,
    the event bus and the timeline."""

    adb: Adb
    pool: ThreadPoolExecutor
    """adb calls wait here, not in the default executor: a device that hangs until its timeout cannot
    hold up the rest of the daemon's threaded work."""
    store: DeviceObservations
    observer: Observer
    max_dimension: int
    bus: EventBus
    recorder: Recorder

    async def thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    def info(self, serial: str) -> DeviceInfo:
        return parse_info(self.adb.shell(serial, INFO_COMMAND).text)


def take_screenshot(
    link: AdbLink, serial: str, limit: int | None, fmt: ImageFormat, with_ui: bool
) -> tuple[Observation, bytes, list[str], list[UiNode] | None]:
    """The frame, scaled by its own size; the device's report is checked against it (once more after a
    disagreement, which a rotation under way explains) and a frame that still disagrees is kept with a
    warning (taps on it are refused until the device and a new frame agree). With `with_ui`, the UI is
    dumped right after the frame and joins it only if the device is still as it was."""
    info = link.info(serial)
    capture = link.observer.capture(serial)
    if not same_shape(capture.image.size, (info.width, info.height)):
        info = link.info(serial)
        capture = link.observer.capture(serial)
    image = capture.image
    warnings = list(capture.warnings)
    size = (info.width, info.height)
    if not same_shape(image.size, size):
        size = image.size
        warnings.append(
            f"The frame is {image.width}x{image.height} but the device reports {info.width}x{info.height} "
            f"(rotation {info.rotation}), twice: the image is scaled by the frame's own size, and taps on "
            "this observation are refused. Observe again once the screen has settled."
        )
    scale = fit(size[0], size[1], limit)
    obs = link.store.new(serial, scale, info.rotation, image_format=fmt, black=is_black(image), window=info.window)
    ui_xml = nodes = None
    if with_ui:
        ui_xml = link.observer.dump_ui(serial)
        nodes = parse_dump(ui_xml)
        reason = join_refusal(obs, time.time(), screen_facts(link.info(serial)))
        if reason is not None:
            raise Conflict(f"the device changed while it was observed ({reason}): observe again")
    image = resize(image, scale.image_width, scale.image_height)
    frame_ref = image.convert("L")  # before the marks: what the actions using it are checked against
    if nodes is not None:
        screen = (scale.device_width, scale.device_height)
        marked = [(item.node.index, item.node.bounds.to_image(scale.factor)) for item in uncovered(nodes, screen)]
        image = draw_marks(image, marked)
    data = encode(image, fmt)
    obs = link.store.save(obs, data, ui_xml, reference=frame_ref)
    return obs, data, warnings + ([BLACK_WARNING] if obs.black else []), nodes


def read_ui(link: AdbLink, serial: str, obs_id: str | None) -> tuple[Observation, list[UiNode]]:
    """The UI of the named observation (dumped now if it has none yet and the device still shows what
    it showed; else a 409), or of a new observation, in the image space of the device's latest one
    when the device is still as it was then."""
    if obs_id is not None:
        obs = link.store.get(serial, obs_id)
        nodes = link.store.ui_nodes(obs)
        if nodes is not None:
            return obs, nodes
        reason = join_refusal(obs, time.time())
        if reason is None:
            xml = link.observer.dump_ui(serial)
            nodes = parse_dump(xml)
            reason = join_refusal(obs, time.time(), screen_facts(link.info(serial))) or changed_since(
                link.store, link.observer, obs
            )
            if reason is None:
                return link.store.attach_ui(obs, xml), nodes
        raise Conflict(
            f"observation {obs.obs_id} cannot take a UI dump of the screen now: {reason}. Observe again: "
            "POST /screenshot with ui=true (screenshot and UI together), or GET /ui without obs_id",
            obs_id=obs.obs_id,
        )
    info = link.info(serial)
    frame = link.observer.capture(serial).image
    xml = link.observer.dump_ui(serial)
    nodes = parse_dump(xml)
    latest = link.store.latest(serial)
    was = None if latest is None else (latest.scale.device_width, latest.scale.device_height, latest.rotation)
    if latest is not None and was == (info.width, info.height, info.rotation):
        scale = latest.scale
    else:
        scale = fit(info.width, info.height, link.max_dimension)
    obs = link.store.new(serial, scale, info.rotation, window=info.window)
    reason = join_refusal(obs, time.time(), screen_facts(link.info(serial)))
    if reason is not None:
        raise Conflict(f"the device changed while its UI was read ({reason}): observe again")
    frame_ref = reference(frame, scale) if same_shape(frame.size, (info.width, info.height)) else None
    return link.store.save(obs, ui_xml=xml, reference=frame_ref), nodes


def changed_since(store: DeviceObservations, observer: Observer, obs: Observation) -> str | None:
    """Why a capture taken now shows something else than the screenshot `obs` (a change inside the same
    window: a scroll, a dialog, new text), or None while it shows the same, compared as actions are
    (lookout.device.verify) over the whole image."""
    ref = store.reference(obs)
    if ref is None:
        return "it has no reference frame to compare the screen with (taken by an older lookout)"
    frame = observer.capture(obs.serial).image
    if not same_shape(frame.size, (obs.scale.device_width, obs.scale.device_height)):
        return f"the screen is {frame.width}x{frame.height} now"
    box = Box(0, 0, obs.scale.image_width, obs.scale.image_height)
    found = difference(ref, reference(frame, obs.scale), box)
    if found is None:
        return None
    return f"the screen changed since it was taken ({100 * found.changed / found.area:.1f}% of its pixels differ)"


def screen_facts(info: DeviceInfo) -> tuple[int, int, int, str | None]:
    return info.width, info.height, info.rotation, info.window


def parse_dump(xml: bytes) -> list[UiNode]:
    try:
        return parse_hierarchy(xml)
    except UiParseError as exc:
        raise BackendFailure(f"the device's UI dump is not readable: {exc}") from exc
