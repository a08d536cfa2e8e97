"""Set-of-marks: UI element boxes and their indices drawn on a screenshot."""
from __future__ import annotations

from PIL import Image, ImageChops

from lookout.device.marks import draw_marks
from lookout.device.ui_tree import Bounds

BACKGROUND = (250, 250, 250)


def solid(width: int = 300, height: int = 400, mode: str = "RGB") -> Image.Image:
    return Image.new("RGB", (width, height), BACKGROUND).convert(mode)


def unchanged(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox() is None


def test_boxes_are_outlined_and_labelled_and_the_rest_is_left() -> None:
    image = solid()
    marked = draw_marks(image, [(3, Bounds(20, 30, 140, 100)), (12, Bounds(150, 200, 280, 380))])
    assert marked is not image and marked.size == image.size and marked.mode == "RGB"
    assert marked.getpixel((80, 99)) != BACKGROUND  # the first box's bottom edge
    assert marked.getpixel((139, 70)) != BACKGROUND  # its right edge
    assert marked.getpixel((279, 300)) != BACKGROUND  # the second box's right edge
    assert marked.getpixel((215, 379)) != BACKGROUND  # its bottom edge
    assert marked.getpixel((22, 32)) != BACKGROUND  # the first label, at the top-left corner
    assert marked.getpixel((80, 99)) != marked.getpixel((215, 379))  # a colour of its own per box
    for far in [(5, 5), (100, 150), (290, 150), (10, 390), (200, 300)]:  # outside, between, inside
        assert marked.getpixel(far) == BACKGROUND
    assert unchanged(image, solid())  # the input is untouched


def test_other_modes_come_back_as_rgb() -> None:
    for mode in ("RGBA", "L", "P"):
        marked = draw_marks(solid(mode=mode), [(0, Bounds(10, 10, 60, 60))])
        assert marked.mode == "RGB" and marked.size == (300, 400)


def test_boxes_partly_outside_are_clipped() -> None:
    marked = draw_marks(solid(), [(7, Bounds(-50, -50, 100, 80)), (8, Bounds(250, 350, 400, 500)),
                                  (9, Bounds(290, 10, 330, 60))])  # fmt: skip
    assert marked.size == (300, 400)
    assert marked.getpixel((50, 79)) != BACKGROUND  # the visible bottom edge of the first
    assert marked.getpixel((0, 60)) != BACKGROUND  # its left edge, clipped to the image
    assert marked.getpixel((299, 380)) != BACKGROUND  # the second, at the bottom-right corner
    assert any(marked.getpixel((x, 30)) != BACKGROUND for x in range(260, 300))  # the third's label, inside


def test_degenerate_and_outside_boxes_are_skipped() -> None:
    image = solid()
    marked = draw_marks(image, [(1, Bounds(50, 50, 50, 90)), (2, Bounds(50, 50, 120, 50)),
                                (3, Bounds(500, 500, 600, 600)), (4, Bounds(-90, -90, -10, -10))])  # fmt: skip
    assert unchanged(marked, image)
    assert unchanged(draw_marks(image, []), image)


def test_a_tiny_image_does_not_raise() -> None:
    marked = draw_marks(solid(6, 6), [(123, Bounds(0, 0, 6, 6))])
    assert marked.size == (6, 6)
