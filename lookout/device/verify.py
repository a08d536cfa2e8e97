"""Whether the screen still shows, where an action lands, what the observation it uses showed: pure functions
over Pillow images.

Every observation keeps a reference: its frame scaled to the observation's image size, in grey levels,
without the marks a screenshot may carry and without lossy encoding (`reference`). Before a tap or a swipe,
a fresh capture is scaled the same way over the target's box only (`region`: Pillow's resize over a source
box samples exactly the pixels a resize of the whole frame would, at a fraction of the cost) and compared
with the reference's box (`difference`). A pixel differs when its grey level moved by more than LEVEL; the
box differs when more than TOLERATED of its pixels (and at least MIN_PIXELS) differ, unless every change lies
within a line at most THIN pixels across (a blinking text cursor). A clock or a spinner elsewhere on the
screen is outside the box and never looked at. When the box differs, `find_shift` looks for its content
moved up, down, left or right, so the refusal can say "the content moved up by 120 px" (a list scrolled).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageChops, ImageFilter, ImageStat

from lookout.core.images import resize
from lookout.core.scaling import Scale

LEVEL = 32
"""Grey levels (of 255) a pixel may move by and still count as the same: more than resampling noise, less
than any text or edge."""
TOLERATED = 0.002
"""The share of a box's pixels that may differ (a ticking digit inside a large element)."""
MIN_PIXELS = 24
"""...and at least this many pixels may differ, whatever the box's size."""
THIN = 3
"""Changes that all fit within a line this many image pixels across (a text cursor) are ignored."""
POINT_BOX = 48
"""The side, in image pixels, of the box checked around a tap at x,y (a finger and what is around it, at 1000 px)."""
ROW_MARGIN = 32
ROW_ALIGN = 16
"""Frame rows taken around a box's rows, and the alignment of the first (see rows_for)."""
MAX_SHIFT_SEARCH = 600
"""Image pixels a box's content is looked for away from where it was, along each axis."""
SHIFT_MATCH = 0.5
MAX_SHIFT_DIFFERENCE = 8.0
SHIFT_PATCH = 40_000
"""The search looks for at most this many pixels of a box, around its middle, of its shape (bounded work)."""


@dataclass(frozen=True, slots=True)
class Box:
    """A rectangle in an observation's image pixels (right and bottom excluded)."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def area(self) -> int:
        return max(self.width, 0) * max(self.height, 0)

    def clipped(self, width: int, height: int) -> Box:
        return Box(max(self.left, 0), max(self.top, 0), min(self.right, width), min(self.bottom, height))

    def moved(self, dx: int, dy: int) -> Box:
        return Box(self.left + dx, self.top + dy, self.right + dx, self.bottom + dy)


def point_box(x: float, y: float, width: int, height: int) -> Box:
    """The box checked around a point of an image of width x height."""
    half = POINT_BOX // 2
    return Box(round(x) - half, round(y) - half, round(x) + half, round(y) + half).clipped(width, height)


def reference(frame: Image.Image, scale: Scale) -> Image.Image:
    """The frame as an observation's reference: at its image size, in grey levels."""
    return resize(frame, scale.image_width, scale.image_height).convert("L")


def encode_reference(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def decode_reference(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image.convert("L")


def region(frame: Image.Image, scale: Scale, box: Box) -> Image.Image:
    """The part of `reference(frame, scale)` under `box`, computed from that part of the frame only."""
    fx = frame.width / scale.image_width
    fy = frame.height / scale.image_height
    source = (box.left * fx, box.top * fy, box.right * fx, box.bottom * fy)
    return frame.resize((box.width, box.height), Image.Resampling.LANCZOS, box=source, reducing_gap=2.0).convert("L")


def rows_for(frame_height: int, scale: Scale, box: Box) -> tuple[int, int]:
    """The frame rows `region_of_rows` needs for `box`: the box's rows with room for the resampling filter
    around them, starting on a multiple of ROW_ALIGN (so any reduction step lines up as on the whole frame)."""
    fy = frame_height / scale.image_height
    top = max(0, (int(box.top * fy) - ROW_MARGIN) // ROW_ALIGN * ROW_ALIGN)
    return top, min(frame_height, int(box.bottom * fy + 1) + ROW_MARGIN)


def region_of_rows(rows: Image.Image, first_row: int, frame_height: int, scale: Scale, box: Box) -> Image.Image:
    """`region` computed from rows first_row.. of the frame only (from `rows_for`): the same pixels."""
    fx, fy = rows.width / scale.image_width, frame_height / scale.image_height
    source = (box.left * fx, box.top * fy - first_row, box.right * fx, box.bottom * fy - first_row)
    return rows.resize((box.width, box.height), Image.Resampling.LANCZOS, box=source, reducing_gap=2.0).convert("L")


@dataclass(frozen=True, slots=True)
class Difference:
    """How the box differs: `changed` of its `area` pixels; `shift` (dx, dy) when its content was found
    moved by that many image pixels."""

    changed: int
    area: int
    shift: tuple[int, int] | None = None

    def describe(self) -> str:
        share = f"{100 * self.changed / max(self.area, 1):.0f}% of its pixels differ"
        if self.shift is None:
            return f"the screen there changed ({share})"
        dx, dy = self.shift
        moves = [f"{'up' if dy < 0 else 'down'} by {abs(dy)} px" if dy else "",
                 f"{'left' if dx < 0 else 'right'} by {abs(dx)} px" if dx else ""]  # fmt: skip
        what = "the list scrolled" if dy and not dx else "the content moved"
        return f"{what}: what was there is now {' and '.join(m for m in moves if m)} in the screenshot's pixels"


def changed_pixels(a: Image.Image, b: Image.Image) -> int:
    """Pixels of two grey images of one size that differ by more than LEVEL, 0 when every change fits in a
    line at most THIN pixels across."""
    mask = ImageChops.difference(a, b).point(lambda v: 255 if v > LEVEL else 0)
    bbox = mask.getbbox()
    if bbox is None or min(bbox[2] - bbox[0], bbox[3] - bbox[1]) <= THIN:
        return 0
    return mask.histogram()[255]


def tolerated(changed: int, area: int) -> bool:
    return changed <= max(MIN_PIXELS, TOLERATED * area)


def difference(reference_box: Image.Image, fresh_box: Image.Image, box: Box) -> Difference | None:
    """How the fresh capture's box differs from the reference's, or None while it shows the same."""
    changed = changed_pixels(reference_box, fresh_box)
    return None if tolerated(changed, box.area) else Difference(changed, box.area)


def find_shift(ref: Image.Image, fresh: Image.Image, box: Box) -> tuple[int, int] | None:
    """Where the reference's box content is in the fresh image (both whole references), as (dx, dy) along one
    axis, or None when it is nowhere near. Both are blurred by a pixel first (a scroll by a fraction of an image
    pixel resamples every edge) and compared by their mean difference: the best offset must differ at most
    SHIFT_MATCH as much as the box where it was, and at most MAX_SHIFT_DIFFERENCE grey levels on average."""
    shrink = min(1.0, (SHIFT_PATCH / max(box.area, 1)) ** 0.5)
    cx, cy = (box.left + box.right) // 2, (box.top + box.bottom) // 2
    hw, hh = max(1, round(box.width * shrink / 2)), max(1, round(box.height * shrink / 2))
    box = Box(cx - hw, cy - hh, cx + hw, cy + hh)
    blurred_ref, blurred = ref.filter(ImageFilter.BoxBlur(1)), fresh.filter(ImageFilter.BoxBlur(1))
    content = blurred_ref.crop((box.left, box.top, box.right, box.bottom))

    def cost(dx: int, dy: int) -> float | None:
        moved = box.moved(dx, dy)
        if moved.clipped(fresh.width, fresh.height) != moved:
            return None
        there = blurred.crop((moved.left, moved.top, moved.right, moved.bottom))
        return float(ImageStat.Stat(ImageChops.difference(content, there)).mean[0])

    where = cost(0, 0)
    best: tuple[float, tuple[int, int]] | None = None
    for axis in ((0, 1), (1, 0)):
        limit = min(MAX_SHIFT_SEARCH, fresh.height if axis[1] else fresh.width)
        for step in range(-limit, limit + 1, 2):
            offset = (axis[0] * step, axis[1] * step)
            found = cost(*offset) if step else None
            if found is not None and (best is None or found < best[0]):
                best = (found, offset)
    if best is None or where is None:
        return None
    dx, dy = best[1]
    for near in (-1, 1):  # the best odd offset next to the best even one
        offset = (dx + near, dy) if dx else (dx, dy + near)
        found = cost(*offset) if offset != (0, 0) else None
        if found is not None and found < best[0]:
            best = (found, offset)
    return best[1] if best[0] <= min(SHIFT_MATCH * where, MAX_SHIFT_DIFFERENCE) else None
