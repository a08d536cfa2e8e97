"""Screen captures from `screencap`: parsing the raw and PNG forms, and the black-screen check (Pillow).

Pure functions over bytes and images. The raw form is a little-endian header (width, height, pixel
format, and a colour space on Android 9+) followed by the pixels; it avoids the device's slow PNG
encoder, so it is tried first. Text a device prints before the image (the multi-display warning, which a
v1 shell mixes into stdout) is skipped in both forms.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import cast

from PIL import Image

from lookout.core.errors import BackendFailure

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_RAW_MODES = {1: ("RGBX", 4), 2: ("RGBX", 4), 3: ("RGB", 3), 4: ("BGR;16", 2)}
"""Android PixelFormat -> (Pillow raw mode, bytes per pixel): RGBA_8888 and RGBX_8888 (alpha is ignored:
a screen is opaque), RGB_888, RGB_565."""
BLACK_LEVEL = 8
"""A capture whose brightest pixel is at most this (of 255) is black."""
BLACK_WARNING = (
    "The screenshot is black: the screen may be off or locked, or the app forbids capture (FLAG_SECURE). "
    "Wake the device (key WAKEUP) or check the UI tree instead."
)


class CaptureError(BackendFailure):
    """The device's output is not an image lookout can read."""


@dataclass(frozen=True, slots=True)
class RawLayout:
    """Where the pixels are in a device's raw `screencap` output: they start at `offset` (after any text and
    the header), `width` x `height` pixels of `bpp` bytes each, in Pillow's raw `mode`."""

    offset: int
    width: int
    height: int
    mode: str
    bpp: int

    @property
    def stride(self) -> int:
        return self.width * self.bpp

    def image(self, pixels: bytes | memoryview, rows: int) -> Image.Image:
        return Image.frombytes("RGB", (self.width, rows), pixels, "raw", self.mode)


def parse_raw(data: bytes) -> Image.Image:
    """The image in `screencap`'s raw output (text lines before the header are skipped)."""
    layout = raw_layout(data)
    return layout.image(memoryview(data)[layout.offset :], layout.height)


def raw_layout(data: bytes) -> RawLayout:
    """Where the image is in `screencap`'s raw output."""
    for start in _candidate_starts(data):
        layout = _raw_at(data, start)
        if layout is not None:
            return layout
    raise CaptureError(f"raw screencap output is not an image ({len(data)} bytes: {data[:60]!r})")


def _candidate_starts(data: bytes) -> list[int]:
    """Offset 0, then the start of every line while the bytes before it read as text."""
    starts, pos = [0], 0
    while (nl := data.find(b"\n", pos, pos + 4096)) != -1 and data[pos:nl].isascii():
        pos = nl + 1
        starts.append(pos)
    return starts


def _raw_at(data: bytes, start: int) -> RawLayout | None:
    if len(data) - start < 12:
        return None
    width, height, fmt = struct.unpack_from("<III", data, start)
    if fmt not in _RAW_MODES or not (0 < width <= 20_000 and 0 < height <= 20_000):
        return None
    mode, bpp = _RAW_MODES[fmt]
    size = width * height * bpp
    for header in (16, 12):  # Android 9+ adds a colour space to the header
        if len(data) - start - header == size:
            return RawLayout(start + header, width, height, mode, bpp)
    return None


def parse_png(data: bytes) -> Image.Image:
    """The image in `screencap -p`'s output, wherever its PNG starts."""
    start = data.find(PNG_SIGNATURE)
    if start == -1:
        raise CaptureError(f"screencap -p output has no PNG ({len(data)} bytes: {data[:60]!r})")
    try:
        image = Image.open(io.BytesIO(data[start:]))
        image.load()
    except (OSError, SyntaxError) as exc:
        raise CaptureError(f"screencap -p output is a broken PNG: {exc}") from exc
    return image.convert("RGB")


def is_black(image: Image.Image) -> bool:
    """Whether every pixel is (almost) black."""
    thumb = image.copy()
    thumb.thumbnail((64, 64))
    _, brightest = cast(tuple[int, int], thumb.convert("L").getextrema())  # one band: one (min, max) pair
    return brightest <= BLACK_LEVEL
