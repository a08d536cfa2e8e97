"""Image space and device space: the scale of a screenshot and the conversions an agent never does itself.

A screenshot is scaled so that its longest side fits `max_dimension` (the aspect ratio kept); its
`scale_factor` is device pixels per image pixel (1.0 when the screen already fits). Coordinates from the
agent are in image space and become device pixels here; bounds from the device become image pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

RAW_WARNING = "Raw mode: no scaling applied. May exceed API limits with multiple images."
TOKENS_PER_PIXEL = 1 / 750
"""A model's cost of an image: about width x height / 750 tokens (28 px patches)."""


@dataclass(frozen=True, slots=True)
class Scale:
    """How one observation maps image pixels to device pixels."""

    device_width: int
    device_height: int
    image_width: int
    image_height: int
    factor: float

    def to_device(self, x: float, y: float) -> tuple[int, int]:
        """An image point as a device pixel, kept on the screen."""
        dx = min(max(round(x * self.factor), 0), self.device_width - 1)
        dy = min(max(round(y * self.factor), 0), self.device_height - 1)
        return dx, dy

    def to_image(self, value: int) -> int:
        """A device coordinate (or length) in image pixels."""
        return round(value / self.factor)

    def contains_image_point(self, x: float, y: float) -> bool:
        return 0 <= x <= self.image_width and 0 <= y <= self.image_height


def fit(device_width: int, device_height: int, max_dimension: int | None) -> Scale:
    """The scale that fits the device's screen within `max_dimension` (None: raw, no scaling)."""
    longest = max(device_width, device_height)
    if max_dimension is None or longest <= max_dimension:
        return Scale(device_width, device_height, device_width, device_height, 1.0)
    factor = longest / max_dimension
    width = max(1, round(device_width / factor))
    height = max(1, round(device_height / factor))
    return Scale(device_width, device_height, width, height, factor)


SHAPE_TOLERANCE = 0.02


def same_shape(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two sizes have the same aspect ratio (within 2%): a frame and the screen it shows, at any
    resolution (a `wm size` override scales the screen, not the frame)."""
    ratio_a, ratio_b = a[0] / max(a[1], 1), b[0] / max(b[1], 1)
    return abs(ratio_a - ratio_b) <= SHAPE_TOLERANCE * ratio_b


def image_tokens(width: int, height: int) -> int:
    """The estimated model cost of an image of this size."""
    return math.ceil(width * height * TOKENS_PER_PIXEL)
