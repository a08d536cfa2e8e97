"""Screens for the fake device that show what their UI dump says, so that a check of pixels means something: every
node with bounds is drawn as a rectangle of a colour of its own (from its class, text, description and id), and a
node's text as dark strokes whose pattern follows the text. Two dumps that place different things somewhere
differ there in pixels; the same dump drawn twice is the same image.

The dump is read with ElementTree directly (not with lookout's parser: the fake must not share the code under
test)."""
from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET

from PIL import Image, ImageDraw

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _colour(*parts: str) -> tuple[int, int, int]:
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return 60 + digest[0] % 170, 60 + digest[1] % 170, 60 + digest[2] % 170


def render_dump(xml: str, size: tuple[int, int]) -> Image.Image:
    """The dump's nodes drawn in document order (inner nodes over outer ones) on a screen of `size`."""
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    for node in ET.fromstring(xml[xml.index("<hierarchy"):]).iter("node"):
        match = _BOUNDS.fullmatch(node.get("bounds", ""))
        if match is None:
            continue
        left, top, right, bottom = (int(v) for v in match.groups())
        if right <= left or bottom <= top:
            continue
        label = node.get("text", "") or node.get("content-desc", "")
        fill = _colour(node.get("class", ""), label, node.get("resource-id", ""))
        draw.rectangle((left, top, right - 1, bottom - 1), fill=fill, outline=(30, 30, 30))
        if label:
            _strokes(draw, label, (left, top, right, bottom))
    return image


def _strokes(draw: ImageDraw.ImageDraw, text: str, box: tuple[int, int, int, int]) -> None:
    """Text as a row of dark strokes, one per character, whose heights follow the characters."""
    left, top, right, bottom = box
    height = max(4, min(24, (bottom - top) // 3))
    y = top + (bottom - top - height) // 2
    x = left + 6
    for char in text:
        if x + 6 > right:
            break
        tall = 2 + (ord(char) * 7) % (height - 1)
        if not char.isspace():
            draw.rectangle((x, y + height - tall, x + 4, y + height), fill=(20, 20, 20))
        x += 8
