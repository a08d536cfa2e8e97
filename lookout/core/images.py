"""Images for models: resizing to an observation's scale and encoding (png, jpeg, webp) with Pillow (imported
by what uses these: a daemon that shows no image never loads it)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from PIL import Image

ImageFormat = Literal["png", "jpeg", "webp"]
MEDIA_TYPES: dict[str, str] = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


def resize(image: Image.Image, width: int, height: int) -> Image.Image:
    """`image` at width x height (itself when it already is)."""
    if image.size == (width, height):
        return image
    from PIL import Image

    return image.resize((width, height), Image.Resampling.LANCZOS, reducing_gap=2.0)


def encode(image: Image.Image, fmt: ImageFormat) -> bytes:
    out = io.BytesIO()
    if fmt == "png":
        image.save(out, "PNG", compress_level=6)
    elif fmt == "jpeg":
        image.convert("RGB").save(out, "JPEG", quality=80)
    else:
        image.save(out, "WEBP", quality=80, method=2)
    return out.getvalue()
