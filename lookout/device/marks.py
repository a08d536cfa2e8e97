"""Set-of-marks: a screenshot with each UI element's box outlined and its index written on it."""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw, ImageFont

from lookout.device.ui_tree import Bounds

COLOURS = ((230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (0, 128, 128))


def draw_marks(image: Image.Image, marks: Sequence[tuple[int, Bounds]]) -> Image.Image:
    """A copy of `image` with every (index, bounds in image space) drawn: a 2 px outline and a label with the
    index at the box's top-left corner, kept inside the image. Empty boxes are skipped."""
    out = image.convert("RGB")
    draw = ImageDraw.Draw(out)
    font = ImageFont.load_default(size=max(10, out.height // 60))
    width, height = out.size
    for n, (index, box) in enumerate(marks):
        left, top = max(box.left, 0), max(box.top, 0)
        right, bottom = min(box.right, width) - 1, min(box.bottom, height) - 1
        if right <= left or bottom <= top:
            continue
        colour = COLOURS[n % len(COLOURS)]
        draw.rectangle((left, top, right, bottom), outline=colour, width=2)
        label = str(index)
        text_left, text_top, text_right, text_bottom = draw.textbbox((0, 0), label, font=font)
        w, h = text_right - text_left + 4, text_bottom - text_top + 4
        x, y = max(0, min(left, width - w)), max(0, min(top, height - h))
        draw.rectangle((x, y, x + w, y + h), fill=colour)
        draw.text((x + 2 - text_left, y + 2 - text_top), label, fill=(255, 255, 255), font=font)
    return out
