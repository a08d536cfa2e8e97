"""The pure parts of devices: scaling, keys, text for `input text`, device info, logcat, capture parsing."""
from __future__ import annotations

import io
import shlex
import struct
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from lookout.core.errors import BackendFailure, BadInput
from lookout.core.images import encode, resize
from lookout.core.scaling import fit, image_tokens, same_shape
from lookout.device.capture import CaptureError, is_black, parse_png, parse_raw
from lookout.device.info import parse_info
from lookout.device.keys import keycode
from lookout.device.logcat import filter_lines
from lookout.device.observations import UI_JOIN_MAX_AGE_S, Observation, join_refusal
from lookout.device.text_input import type_commands

WARNING = b"[Warning] Multiple displays were found, but no display id was specified!\n"


# ----------------------------------------------------------------------------- scaling


@pytest.mark.parametrize(
    ("device", "image", "factor"),
    [((1080, 2400), (450, 1000), 2.4), ((1440, 3120), (462, 1000), 3.12), ((2400, 1080), (1000, 450), 2.4),
     ((1840, 2208), (833, 1000), 2.208), ((720, 900), (720, 900), 1.0)],
)  # fmt: skip
def test_fit_keeps_the_aspect_ratio_within_the_limit(device, image, factor) -> None:
    scale = fit(*device, 1000)
    assert (scale.image_width, scale.image_height) == image
    assert scale.factor == pytest.approx(factor)


def test_raw_keeps_the_device_size() -> None:
    scale = fit(1440, 3120, None)
    assert (scale.image_width, scale.image_height, scale.factor) == (1440, 3120, 1.0)


def test_to_device_rounds_and_stays_on_the_screen() -> None:
    scale = fit(1080, 2400, 1000)
    assert scale.to_device(225, 656) == (540, 1574)
    assert scale.to_device(450, 1000) == (1079, 2399)
    assert scale.to_image(1575) == 656


@given(st.integers(200, 4000), st.integers(200, 4000), st.integers(100, 3000))
def test_image_points_map_back_within_one_image_pixel(width: int, height: int, limit: int) -> None:
    scale = fit(width, height, limit)
    assert max(scale.image_width, scale.image_height) <= max(limit, 1) or scale.factor == 1.0
    for x, y in [(0, 0), (scale.image_width / 2, scale.image_height / 3), (scale.image_width, scale.image_height)]:
        dx, dy = scale.to_device(x, y)
        assert 0 <= dx < width and 0 <= dy < height
        assert abs(scale.to_image(dx) - x) <= 1 and abs(scale.to_image(dy) - y) <= 1


def test_image_tokens() -> None:
    assert image_tokens(450, 1000) == 600
    assert image_tokens(1440, 3120) == 5991


# ----------------------------------------------------------------------------- keys and text


def test_key_names_aliases_and_codes() -> None:
    assert keycode("HOME") == 3
    assert keycode("keycode_back") == 4
    assert keycode("Backspace") == 67
    assert keycode("66") == 66
    assert keycode(187) == 187
    with pytest.raises(BadInput, match="unknown key 'JUMP'"):
        keycode("JUMP")
    with pytest.raises(BadInput, match="out of range"):
        keycode(0)
    with pytest.raises(BadInput, match="unknown key"):
        keycode("²")  # a digit to str.isdigit, not to int(): found by schemathesis as a 500


def _typed(commands: list[str]) -> str:
    """What Android's `input text` / `input keyevent` would type for these commands."""
    out = ""
    for command in commands:
        argv = shlex.split(command)
        if argv[1] == "keyevent":
            out += {"66": "\n", "61": "\t"}[argv[2]]
            continue
        text, i = argv[2], 0
        while i < len(text):  # Android reads `%s` as a space
            if text[i] == "%" and text[i + 1 : i + 2] == "s":
                out, i = out + " ", i + 2
            else:
                out, i = out + text[i], i + 1
    return out


def test_type_commands_escape_spaces_and_shell_characters() -> None:
    commands = type_commands("it's $HOME; a && b")
    assert commands == ["input text 'it'\"'\"'s%s$HOME;%sa%s&&%sb'"]
    assert _typed(commands) == "it's $HOME; a && b"


def test_literal_percent_s_and_newlines() -> None:
    commands = type_commands("50%s off\nnext")
    assert commands[-2] == "input keyevent 66"
    assert _typed(commands) == "50%s off\nnext"


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("\n\t"), max_size=60))
def test_every_printable_ascii_text_round_trips(text: str) -> None:
    assert _typed(type_commands(text)) == text


@pytest.mark.parametrize("text", ["café", "日本", "a\x07b", "emoji 🙂"])
def test_text_input_text_cannot_carry_is_refused_with_the_reason(text: str) -> None:
    with pytest.raises(BadInput, match="printable ASCII only"):
        type_commands(text)


# ----------------------------------------------------------------------------- device info, logcat


def test_parse_info_rotation_swaps_the_size() -> None:
    out = "model=Pixel 7\nPhysical size: 1080x2400\norientation=1\n"
    info = parse_info(out)
    assert (info.model, info.width, info.height, info.rotation) == ("Pixel 7", 2400, 1080, 1)
    assert parse_info("model=X\nPhysical size: 1080x2400\nOverride size: 720x1600\n").width == 720
    with pytest.raises(BackendFailure, match="screen size"):
        parse_info("model=X\nerror: no wm\n")


LOG = [
    "--------- beginning of main",
    "11-22 10:00:00.100  1234  1250 D Lookout : debug line",
    "11-22 10:00:00.200  1234  1250 W Lookout : warn line",
    "11-22 10:00:00.300  1234  1251 E Other   : error line",
    "11-22 10:00:00.400  1234  1251 I Lookout: info: with colon",
]


def test_logcat_filters_by_tag_and_level_and_keeps_the_last() -> None:
    assert filter_lines(LOG, tag=None, level=None, limit=100) == LOG
    assert filter_lines(LOG, tag="Lookout", level=None, limit=100) == [LOG[1], LOG[2], LOG[4]]
    assert filter_lines(LOG, tag=None, level="W", limit=100) == [LOG[2], LOG[3]]
    assert filter_lines(LOG, tag="Lookout", level="I", limit=1) == [LOG[4]]


# ----------------------------------------------------------------------------- capture


def _raw(image: Image.Image, header: int = 16) -> bytes:
    head = struct.pack("<III", image.width, image.height, 1) + (b"\0\0\0\0" if header == 16 else b"")
    return head + image.convert("RGBA").tobytes()


def _bands(width: int = 30, height: int = 60) -> Image.Image:
    image = Image.new("RGB", (width, height), (200, 30, 30))
    image.paste((30, 200, 30), (0, height // 2, width, height))
    return image


@pytest.mark.parametrize("header", [16, 12])
def test_parse_raw_reads_both_header_sizes(header: int) -> None:
    image = _bands()
    parsed = parse_raw(_raw(image, header))
    assert parsed.size == image.size
    assert parsed.getpixel((5, 5)) == (200, 30, 30) and parsed.getpixel((5, 55)) == (30, 200, 30)


def test_parse_raw_skips_a_warning_line_before_the_header() -> None:
    assert parse_raw(WARNING + _raw(_bands())).getpixel((5, 55)) == (30, 200, 30)


def test_parse_raw_refuses_what_is_not_an_image() -> None:
    with pytest.raises(CaptureError, match="not an image"):
        parse_raw(b"/system/bin/sh: screencap: not found\n")
    with pytest.raises(CaptureError):
        parse_raw(_raw(_bands())[:-10])


def test_parse_png_finds_the_png_after_text() -> None:
    png = encode(_bands(), "png")
    assert parse_png(WARNING + png).size == (30, 60)
    with pytest.raises(CaptureError, match="no PNG"):
        parse_png(b"ERROR: capture failed")


def test_black_detection() -> None:
    assert is_black(Image.new("RGB", (100, 200), (0, 0, 0)))
    assert is_black(Image.new("RGB", (100, 200), (3, 3, 3)))
    almost = Image.new("RGB", (100, 200))
    almost.paste((255, 255, 255), (40, 90, 60, 110))
    assert not is_black(almost)


@pytest.mark.parametrize("fmt", ["png", "jpeg", "webp"])
def test_resize_and_encode(fmt: str) -> None:
    data = encode(resize(_bands(300, 600), 100, 200), fmt)  # type: ignore[arg-type]
    decoded = Image.open(io.BytesIO(data))
    assert decoded.format == fmt.upper() and decoded.size == (100, 200)


def test_parse_info_reads_the_focused_window() -> None:
    head = "model=X\nPhysical size: 1080x2400\n"
    focused = parse_info(head + "  mCurrentFocus=Window{5e1b2a0 u0 com.whatsapp/com.whatsapp.HomeActivity}\n")
    assert focused.window == "com.whatsapp/com.whatsapp.HomeActivity"
    assert parse_info(head + "  mCurrentFocus=null\n").window is None
    assert parse_info(head).window is None


def test_a_dump_joins_a_screenshot_only_while_the_screen_is_as_it_was() -> None:
    scale = fit(1080, 2400, 1000)
    obs = Observation("o_1", "s", 100.0, 0, scale, window="com.a/.Main")
    assert join_refusal(obs, 100.0 + UI_JOIN_MAX_AGE_S, (1080, 2400, 0, "com.a/.Main")) is None
    assert join_refusal(obs, 100.0 + UI_JOIN_MAX_AGE_S) is None
    assert "old" in join_refusal(obs, 100.1 + UI_JOIN_MAX_AGE_S, (1080, 2400, 0, "com.a/.Main"))
    assert "old" in join_refusal(obs, 100.1 + UI_JOIN_MAX_AGE_S)
    assert "now 2400x1080 at rotation 1" in join_refusal(obs, 101.0, (2400, 1080, 1, "com.a/.Main"))
    landscape = replace(obs, rotation=1, scale=fit(2400, 1080, 1000))
    assert "rotation 3" in join_refusal(landscape, 101.0, (2400, 1080, 3, "com.a/.Main"))
    assert "was com.a/.Main and is now com.b/.Main" in join_refusal(obs, 101.0, (1080, 2400, 0, "com.b/.Main"))
    assert "was com.a/.Main and is now none" in join_refusal(obs, 101.0, (1080, 2400, 0, None))


def test_same_shape_ignores_resolution_not_orientation() -> None:
    assert same_shape((1080, 2400), (720, 1600))
    assert not same_shape((1080, 2400), (2400, 1080))
    assert not same_shape((1000, 1000), (1080, 2400))
