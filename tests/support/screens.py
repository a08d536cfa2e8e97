"""Screens and UI dumps for the fake device. `render_dump` draws what a UI dump says, so that a check of pixels
means something: every node with bounds is drawn as a rectangle of a colour of its own (from its class, text,
description and id), and a node's text as dark strokes whose pattern follows the text. Two dumps that place
different things somewhere differ there in pixels; the same dump drawn twice is the same image. `bands` is a
plain screen whose shapes show scaling and rotation; `LOGIN_UI` a small made-up dump.

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


def bands(width: int, height: int) -> Image.Image:
    """A grey screen of `width` x `height` with a blue band across its top quarter and a red bar below its
    middle: shapes whose place shows how an image was scaled or rotated."""
    image = Image.new("RGB", (width, height), (220, 220, 220))
    image.paste((40, 90, 200), (0, 0, width, height // 4))
    image.paste((200, 60, 40), (width // 8, height * 5 // 8, width * 7 // 8, height * 11 // 16))
    return image


LOGIN_UI = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" content-desc=""
 clickable="false" enabled="true" bounds="[0,0][1080,2400]">
<node index="0" text="Log in" resource-id="com.example:id/login" class="android.widget.Button" package="com.example"
 content-desc="" clickable="true" enabled="true" bounds="[90,1500][990,1650]" /></node></hierarchy>"""
"""A made-up dump of a 1080x2400 screen: one "Log in" button."""
