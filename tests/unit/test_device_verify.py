"""The pure parts of the check before a device action (issue 30): the pixel comparison of a target's box, the
search for content that moved, the areas a finger can reach, and the system bars `dumpsys window` lists."""
from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageChops, ImageDraw

from lookout.core.scaling import fit
from lookout.device.info import parse_info
from lookout.device.reach import describe_hit, direction_swipe, node_at, reachable, safe_area
from lookout.device.ui_tree import Bounds, parse_hierarchy
from lookout.device.verify import (
    Box,
    Difference,
    changed_pixels,
    decode_reference,
    difference,
    encode_reference,
    find_shift,
    point_box,
    reference,
    region,
    region_of_rows,
    rows_for,
)  # fmt: skip
from tests.support.screens import render_dump

DUMPS = Path(__file__).resolve().parents[1] / "data" / "ui_dumps"


def _screen() -> Image.Image:
    return render_dump((DUMPS / "whatsapp_chats.xml").read_text(), (720, 1483))


def test_a_region_of_the_frame_is_the_same_pixels_as_that_region_of_the_whole_reference() -> None:
    frame, scale = _screen(), fit(720, 1483, 1000)
    whole = reference(frame, scale)
    for box in (Box(0, 282, 486, 355), Box(13, 7, 40, 91), point_box(243, 318, 486, 1000)):
        assert region(frame, scale, box).tobytes() == whole.crop((box.left, box.top, box.right, box.bottom)).tobytes()
    assert decode_reference(encode_reference(whole)).tobytes() == whole.tobytes()


def test_a_thin_line_and_a_few_pixels_are_tolerated_a_changed_label_is_not() -> None:
    base = Image.new("L", (300, 60), 240)
    cursor = base.copy()
    ImageDraw.Draw(cursor).rectangle((100, 5, 102, 55), fill=0)  # a text cursor: 3 px across, 51 down
    assert changed_pixels(base, cursor) == 0
    speck = base.copy()
    ImageDraw.Draw(speck).rectangle((10, 10, 13, 13), fill=0)  # 16 pixels
    assert difference(base, speck, Box(0, 0, 300, 60)) is None
    label = base.copy()
    ImageDraw.Draw(label).rectangle((20, 20, 80, 34), fill=30)  # another word where one was not
    found = difference(base, label, Box(0, 0, 300, 60))
    assert found is not None and found.changed == 61 * 15 and "5% of its pixels differ" in found.describe()


def test_content_moved_by_a_fraction_of_a_pixel_is_found_and_described() -> None:
    scale = fit(720, 1483, 1000)
    ref = reference(_screen(), scale)
    moved = Image.new("RGB", (720, 1483), (250, 250, 250))
    moved.paste(_screen().crop((0, 109, 720, 1483)), (0, 0))  # everything up by one 109 px row: 73.5 image px
    shift = find_shift(ref, reference(moved, scale), Box(0, 282, 486, 355))
    assert shift is not None and shift[0] == 0 and shift[1] in (-73, -74)
    assert Difference(900, 35478, (0, -73)).describe() == "the list scrolled: what was there is now up by 73 px in " \
        "the screenshot's pixels"  # fmt: skip
    other = Image.new("L", ref.size, 128)  # another screen altogether: nothing to find
    assert find_shift(ref, other, Box(0, 282, 486, 355)) is None


def test_the_area_outside_the_bars_and_what_a_finger_reaches() -> None:
    bars = [Bounds(0, 0, 1080, 63), Bounds(0, 2274, 1080, 2400), Bounds(0, 0, 0, 0)]
    assert safe_area(1080, 2400, bars) == Bounds(0, 63, 1080, 2274)
    assert safe_area(2400, 1080, [Bounds(2274, 0, 2400, 1080)]) == Bounds(0, 0, 2274, 1080)  # 3 buttons on the side
    area = Bounds(0, 63, 1080, 2274)
    assert reachable(Bounds(100, 2200, 500, 2600), area) == Bounds(100, 2200, 500, 2274)
    assert reachable(Bounds(100, 2268, 500, 2600), area) is None  # 6 px of it: too little to aim at
    assert reachable(Bounds(100, 10, 500, 60), area) is None  # under the status bar


def test_a_swipe_by_direction_keeps_clear_of_the_bars_and_of_edges_with_none_known() -> None:
    start, end = direction_swipe(1080, 2400, [Bounds(0, 0, 1080, 63), Bounds(0, 2274, 1080, 2400)], "up", 0.95)
    assert 63 < end[1] < start[1] < 2274 and start[0] == end[0]
    start, end = direction_swipe(1080, 2400, [], "up", 0.95)  # no bar known: 5% and 8% of the height kept clear
    assert start[1] < 2400 * 0.92 and end[1] > 2400 * 0.05
    start, end = direction_swipe(1080, 2400, [], "left", 0.5)
    assert start[0] > end[0] and start[1] == end[1]


def test_what_a_tap_hits_is_named_by_its_own_text_or_the_text_inside_it() -> None:
    nodes = parse_hierarchy((DUMPS / "whatsapp_chats.xml").read_text())
    row = node_at(nodes, 360, 472, (720, 1483))
    assert row is not None and row.index == 57
    named = describe_hit(nodes, row, (720, 1483))
    assert named["id"] == "contact_row_container" and "text" not in named
    assert str(named["inner_text"]).startswith("Foto de Amor Pim") and len(str(named["inner_text"])) <= 80
    tab = describe_hit(nodes, nodes[204], (720, 1483))
    assert tab == {"index": 204, "class": "FrameLayout", "text": "Comunidades"}


def test_the_bars_dumpsys_window_lists_on_android_12_and_14() -> None:
    head = "model=X\nPhysical size: 1080x2400\n"
    android_14 = (head + "  mCurrentFocus=Window{5e1b2a0 u0 com.a/com.a.Main}\n"
                  "      InsetsSource id=d1a30000 type=statusBars frame=[0,0][1080,136] visible=true\n"
                  "      InsetsSource id=d1a30001 type=navigationBars frame=[0,2337][1080,2400] visible=true\n"
                  "      InsetsSource id=d1a30005 type=mandatorySystemGestures frame=[0,2274][1080,2400] visible=true\n")  # fmt: skip
    info = parse_info(android_14)
    assert info.window == "com.a/com.a.Main"
    assert safe_area(info.width, info.height, info.bars) == Bounds(0, 136, 1080, 2274)
    android_12 = (head + "    InsetsSource type=ITYPE_STATUS_BAR frame=[0,0][1080,63] visible=true\n"
                  "    InsetsSource type=ITYPE_NAVIGATION_BAR frame=[0,2274][1080,2400] visible=true\n"
                  "    InsetsSource type=ITYPE_IME frame=[0,1400][1080,2400] visible=false\n")  # fmt: skip
    info = parse_info(android_12)
    assert safe_area(info.width, info.height, info.bars) == Bounds(0, 63, 1080, 2274)  # the keyboard is no bar


def test_the_rows_around_a_box_give_the_pixels_of_the_whole_frame_within_resampling_noise() -> None:
    for size in ((720, 1483), (1440, 3120), (1080, 2400)):
        frame = render_dump((DUMPS / "whatsapp_chats.xml").read_text(), size)
        scale = fit(*size, 1000)
        for box in (Box(0, 282, 486, 355), Box(13, 0, 40, 91), Box(100, 950, 300, 1000)):
            box = box.clipped(scale.image_width, scale.image_height)
            first, last = rows_for(frame.height, scale, box)
            rows = frame.crop((0, first, frame.width, last))
            cut, whole = region_of_rows(rows, first, frame.height, scale, box), region(frame, scale, box)
            assert ImageChops.difference(cut, whole).getextrema()[1] <= 8, (size, box)  # LEVEL is 32
            assert changed_pixels(cut, whole) == 0
