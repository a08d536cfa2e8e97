"""What a device says about itself: model, screen size, rotation, focused window and system bars from one
shell command."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lookout.core.errors import BackendFailure
from lookout.device.ui_tree import Bounds

BAR_TYPES = ("statusBars", "navigationBars", "mandatorySystemGestures", "ITYPE_STATUS_BAR", "ITYPE_NAVIGATION_BAR",
             "ITYPE_TOP_MANDATORY_GESTURES", "ITYPE_BOTTOM_MANDATORY_GESTURES")  # fmt: skip
"""The insets sources `dumpsys window` lists for the system bars and their gesture areas (Android 13+ names,
then Android 11-12's)."""
INFO_COMMAND = (
    "echo model=$(getprop ro.product.model); wm size; "
    "dumpsys display | grep -m 1 -o 'orientation=[0-9]'; "
    "dumpsys window | grep -E 'mCurrentFocus=|InsetsSource.*type=(" + "|".join(BAR_TYPES) + ")'"
)
_SIZE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")
_ORIENTATION = re.compile(r"orientation=(\d)")
_FOCUS = re.compile(r"mCurrentFocus=(?:Window\{\S+ \S+ ([^\s}]+)\}?|null)")
_BAR = re.compile(r"InsetsSource.*?type=(\w+).*?frame=\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    model: str
    width: int
    """Screen width in the current rotation, in the pixels `input tap` takes."""
    height: int
    rotation: int
    """0-3, quarter turns from the natural orientation."""
    window: str | None = None
    """The focused window (`package/activity`), None when none has focus or the device does not say."""
    bars: tuple[Bounds, ...] = ()
    """The frames of the system bars and their gesture areas, as `dumpsys window` lists them (device pixels
    in the current rotation); empty when it lists none."""


def parse_info(output: str) -> DeviceInfo:
    """The output of INFO_COMMAND -> DeviceInfo. An override size (`wm size WxH`) wins over the physical
    one; width and height are swapped when the rotation is a quarter or three-quarter turn."""
    model_line = next((line for line in output.splitlines() if line.startswith("model=")), "model=")
    sizes = {kind: (int(w), int(h)) for kind, w, h in _SIZE.findall(output)}
    size = sizes.get("Override") or sizes.get("Physical")
    if size is None:
        raise BackendFailure(f"the device did not report its screen size (`wm size` said {output.strip()[:200]!r})")
    match = _ORIENTATION.search(output)
    rotation = int(match.group(1)) % 4 if match else 0
    width, height = size if rotation % 2 == 0 else (size[1], size[0])
    focus = _FOCUS.search(output)
    window = focus.group(1) if focus else None
    bars = tuple(dict.fromkeys(Bounds(*(int(v) for v in m.groups()[1:])) for m in _BAR.finditer(output)
                               if m.group(1) in BAR_TYPES))  # fmt: skip
    return DeviceInfo(model_line.removeprefix("model=").strip(), width, height, rotation, window, bars)
