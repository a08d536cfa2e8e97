"""Device screenshot and UI dump benchmark: what a screenshot costs end to end, and what scaling saves.

A fake device (tests/support: the device side of the adb protocol, commands in a real /bin/sh) serves a
1440x3120 screen to a real adb server; a `lookout serve` subprocess uses that server. Side by side in one
run:

- lookout `POST /screenshot` end to end (capture over adb, transfer, decode, scale, encode, store, answer)
  for png, jpeg and raw mode (png at full resolution): median and p90 time, bytes and image tokens;
- the peer: adbutils' own `screenshot()` (`screencap -p`, decoded with Pillow) saved as an unscaled PNG,
  as a tool without scaling would send it: time, bytes and tokens;
- a UI dump of 300 nodes: `GET /ui` end to end, and its tokens against the raw XML's;
- a tap end to end, which lookout sends only after checking that the device still shows what the observation
  showed where it lands (the focused window, and the target's pixels in a new capture of the rows around it:
  lookout.device.aim); beside it a key press through the same path without the check (the same HTTP, adb round
  trip and records: the tap without its check), and the peer: a bare `adb shell input tap` through adbutils.
  The fake's `screencap` is a Python script that copies the whole 18 MB frame before the device-side cut; a
  phone's is a copy of its framebuffer.

The fake's `screencap -p` encodes the PNG when asked, as a device does, but on this machine's CPU: a
phone's encoder is slower (0.7 to 2 s for such a screen, notes/android.md), which is what raw capture
with host-side encoding saves; the raw transfer (18 MB here) costs more on a USB link than on loopback.
Image tokens are width x height / 750. The last line of the output is one JSON object with the figures.

    .venv/bin/python bench/device_capture.py [--runs 10]
"""
from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
from terminal_ingest import REPO, Daemon, percentile, timed

sys.path.insert(0, str(REPO))
import adbutils

from lookout.core.scaling import image_tokens
from lookout.core.tokens import count_tokens
from tests.support.adb_fake import FakeDevice
from tests.support.adb_server import AdbServer

SIZE = (1440, 3120)
UI_NODES = 300


def screen() -> Image.Image:
    """A busy 1440x3120 screen: coloured cards on a gradient, each with lines of glyph-like marks, so that the
    image compresses like a real app screen rather than like flat colour."""
    width, height = SIZE
    rng = random.Random(7)
    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    draw = ImageDraw.Draw(image)
    for i in range(24):
        top = 120 + i * 125
        colour = (200 + (i * 53) % 56, 200 + (i * 97) % 56, 200 + (i * 151) % 56)
        draw.rounded_rectangle((40, top, width - 40, top + 110), 18, fill=colour)
        draw.ellipse((60, top + 15, 140, top + 95), fill=((i * 40) % 256, 90, 160))
        for line, size in ((0, 34), (1, 26)):
            x, y = 170, top + 18 + line * 46
            while x < width - 120:
                glyph = rng.randint(size // 3, size)
                draw.rectangle((x, y + size - glyph, x + rng.randint(8, 18), y + size), fill=(30, 30, 30 + line * 60))
                x += rng.randint(14, 24) + (rng.random() < 0.15) * 16
    return image


def ui_xml(nodes: int) -> str:
    """A hierarchy of `nodes` nodes: rows of a list, each a clickable layout with a title and a subtitle."""
    rows, body = (nodes - 2) // 3, []
    for i in range(rows):
        top = 200 + i * 90
        common = 'package="com.example" checkable="false" checked="false" enabled="true" focusable="false" ' \
                 'focused="false" scrollable="false" long-clickable="false" password="false" selected="false"'
        body.append(
            f'<node index="{i}" text="" resource-id="com.example:id/row" class="android.widget.LinearLayout" '
            f'content-desc="" clickable="true" {common} bounds="[0,{top}][1440,{top + 90}]">'
            f'<node index="0" text="Item number {i}" resource-id="com.example:id/title" '
            f'class="android.widget.TextView" content-desc="" clickable="false" {common} '
            f'bounds="[40,{top + 5}][1000,{top + 45}]" />'
            f'<node index="1" text="Details of item {i}, updated today" resource-id="com.example:id/subtitle" '
            f'class="android.widget.TextView" content-desc="" clickable="false" {common} '
            f'bounds="[40,{top + 45}][1000,{top + 85}]" /></node>'
        )
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" '
        'content-desc="" clickable="false" enabled="true" bounds="[0,0][1440,3120]">'
        '<node index="0" text="" resource-id="com.example:id/list" class="android.widget.ListView" '
        'package="com.example" content-desc="" scrollable="true" enabled="true" bounds="[0,200][1440,3120]">'
        + "".join(body) + "</node></node></hierarchy>"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    count_tokens("warm up")
    rows: dict[str, dict[str, Any]] = {}
    taps: dict[str, list[float]] = {}
    with ExitStack() as stack:
        work = Path(tempfile.mkdtemp(prefix="lookout-device-bench-"))
        server = AdbServer(work / "adb")
        stack.callback(server.stop)
        server.start()
        fake = FakeDevice(work / "device", model="Bench", size=SIZE)
        stack.callback(fake.stop)
        fake.start()
        serial = server.connect(fake)
        fake.set_screen(screen())
        xml = ui_xml(UI_NODES)
        fake.set_ui(xml)
        daemon = Daemon(work, env={"LOOKOUT_ADB_PORT": str(server.port)})
        stack.callback(daemon.stop)
        stack.push(daemon.show_log_on_error)
        daemon.start()
        api = stack.enter_context(daemon.client(timeout=120))

        def shot(body: dict[str, Any]) -> dict[str, Any]:
            response = api.post(f"/v1/devices/{serial}/screenshot", json=body)
            response.raise_for_status()
            return response.json()

        for name, body in [("lookout png", {}), ("lookout jpeg", {"format": "jpeg"}), ("lookout raw", {"raw": True})]:
            print(f"{name} ...", file=sys.stderr, flush=True)
            times, result = timed(lambda b=body: shot(b), args.runs)
            size = f"{result['image']['width']}x{result['image']['height']}"
            rows[name] = {"times": times, "bytes": Path(result["path"]).stat().st_size, "image": size,
                          "tokens": result["tokens"]}  # fmt: skip

        print("adbutils screenshot ...", file=sys.stderr, flush=True)
        device = adbutils.AdbClient(host="127.0.0.1", port=server.port).device(serial)

        def peer() -> bytes:
            out = io.BytesIO()
            device.screenshot(error_ok=False).save(out, "PNG")
            return out.getvalue()

        times, png = timed(peer, args.runs)
        rows["adbutils, unscaled"] = {"times": times, "bytes": len(png), "image": f"{SIZE[0]}x{SIZE[1]}",
                                      "tokens": image_tokens(*SIZE)}  # fmt: skip

        print("taps ...", file=sys.stderr, flush=True)
        fake.set_ui(xml)
        listing = api.get(f"/v1/devices/{serial}/ui").json()
        target = {"element": listing["elements"][3]["index"], "obs_id": listing["obs_id"]}

        def tap() -> dict[str, Any]:
            response = api.post(f"/v1/devices/{serial}/tap", json=target)
            response.raise_for_status()
            return response.json()

        def key() -> dict[str, Any]:
            response = api.post(f"/v1/devices/{serial}/key", json={"key": "HOME"})
            response.raise_for_status()
            return response.json()

        taps["tap, checked"], _ = timed(tap, args.runs)
        taps["key press (same path, no check)"], _ = timed(key, args.runs)
        taps["adb shell input tap (peer)"], _ = timed(lambda: device.shell("input tap 300 400"), args.runs)

        print("ui dump ...", file=sys.stderr, flush=True)
        ui_times, ui = timed(lambda: api.get(f"/v1/devices/{serial}/ui", params={"all": "true"}).json(), args.runs)
        default_ui = api.get(f"/v1/devices/{serial}/ui").json()
    report(rows, ui_times, ui, default_ui, count_tokens(xml), taps)


def report(rows: dict[str, dict[str, Any]], ui_times: list[float], ui: dict[str, Any], default_ui: dict[str, Any],
           xml_tokens: int, taps: dict[str, list[float]]) -> None:  # fmt: skip
    print(f"\ndevice_capture: a {SIZE[0]}x{SIZE[1]} screen from a fake device through a real adb server, one run\n")
    print(f"{'':<20} {'median ms':>9} {'p90 ms':>8} {'image':>10} {'bytes':>9} {'tokens':>7}")
    for name, row in rows.items():
        print(f"{name:<20} {statistics.median(row['times']):>9.1f} {percentile(row['times'], 90):>8.1f} "
              f"{row['image']:>10} {row['bytes']:>9} {row['tokens']:>7}")  # fmt: skip
    peer = rows["adbutils, unscaled"]
    png = rows["lookout png"]
    print(f"\nscaled png vs the unscaled image: {png['tokens'] / peer['tokens']:.2f}x the tokens, "
          f"{png['bytes'] / peer['bytes']:.2f}x the bytes")
    print(f"ui dump of {ui['total']} nodes: median {statistics.median(ui_times):.1f} ms, p90 "
          f"{percentile(ui_times, 90):.1f} ms; all nodes {ui['tokens']} tokens, default (interactive and text) "
          f"{default_ui['tokens']} tokens ({default_ui['shown']} elements), raw XML {xml_tokens} tokens")
    print(f"\n{'':<34} {'median ms':>9} {'p90 ms':>8}")
    for name, times in taps.items():
        print(f"{name:<34} {statistics.median(times):>9.1f} {percentile(times, 90):>8.1f}")
    figures = {
        "bench": "device_capture",
        "screen": list(SIZE),
        "screenshots": {name: {"median_ms": round(statistics.median(r["times"]), 1),
                               "p90_ms": round(percentile(r["times"], 90), 1), "bytes": r["bytes"],
                               "image": r["image"], "tokens": r["tokens"]} for name, r in rows.items()},
        "ui": {"nodes": ui["total"], "median_ms": round(statistics.median(ui_times), 1),
               "p90_ms": round(percentile(ui_times, 90), 1), "tokens_all": ui["tokens"],
               "tokens_default": default_ui["tokens"], "xml_tokens": xml_tokens},
        "taps": {name: {"median_ms": round(statistics.median(times), 1), "p90_ms": round(percentile(times, 90), 1)}
                 for name, times in taps.items()},
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
