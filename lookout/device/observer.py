"""Reading a device's screen and UI over adb (synchronous: run in a worker thread).

Captures use raw `screencap` (encoded on the host: the device's PNG encoder is the slow part) and fall
back to `screencap -p` for a device whose raw output cannot be read; the choice is remembered per device.
UI dumps go through a file (`uiautomator dump` writes its errors to stdout and exits 0, so its output is
checked) and are retried once on uiautomator's known transient failures.

The last capture of each device is kept for a moment: the check before an action (lookout.device.verify) may
use a capture at most REUSE_S old instead of taking another, unless an input was sent to the device since
(`forget`, called before every input): a frame from before an input never vouches for a screen after it.
The check can also take only the rows it looks at (`rows`): the device captures the whole screen, but only
those rows cross the link, which is most of a capture's time over USB.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from PIL import Image

from lookout.core.errors import BackendFailure
from lookout.device.adb import Adb
from lookout.device.capture import CaptureError, RawLayout, parse_png, raw_layout

DUMP_PATH = "/data/local/tmp/lookout-window.xml"
MULTI_DISPLAY = b"Multiple displays"
HEADERS = (12, 16)
"""The sizes of a raw capture's header (Android 9+ adds a colour space): a capture whose pixels start there
had nothing printed before it."""
REUSE_S = 0.3
"""How old a capture may be for the check before an action to use it instead of capturing again."""
_DUMP_HINTS = {
    "null root node": "the screen had no window to read (it may be changing or locked)",
    "could not get idle state": "the app kept its UI busy (animations or constant updates)",
}


@dataclass
class Capture:
    image: Image.Image
    warnings: list[str] = field(default_factory=list)
    method: str = "raw"
    taken_at: float = field(default_factory=time.monotonic)


class Observer:
    """Captures and dumps of the devices of one adb server."""

    def __init__(self, adb: Adb) -> None:
        self.adb = adb
        self._png_only: set[str] = set()
        self._last: dict[str, Capture] = {}
        self._input_at: dict[str, float] = {}
        self._layouts: dict[str, RawLayout] = {}
        self._lock = threading.Lock()

    def recent(self, serial: str) -> Capture:
        """A capture at most REUSE_S old with no input sent since, else a new one."""
        return self.reusable(serial) or self.capture(serial)

    def reusable(self, serial: str) -> Capture | None:
        """The device's last capture if it is at most REUSE_S old and no input was sent since."""
        with self._lock:
            last = self._last.get(serial)
            fresh = last is not None and last.taken_at > self._input_at.get(serial, -1.0)
        if last is not None and fresh and time.monotonic() - last.taken_at <= REUSE_S:
            return last
        return None

    def layout(self, serial: str) -> RawLayout | None:
        """How the device's raw captures are laid out, once one was read (None: not known, or not cuttable)."""
        return self._layouts.get(serial)

    def rows(self, serial: str, top: int, bottom: int) -> Image.Image | None:
        """Rows top..bottom of a new capture, of which only those rows cross the link (cut out by the device's
        `tail` and `head`), or None when the device's raw layout is not known yet or the cut failed."""
        layout = self._layouts.get(serial)
        if layout is None:
            return None
        top, bottom = max(top, 0), min(bottom, layout.height)
        if bottom <= top:
            return None
        start, length = layout.offset + top * layout.stride, (bottom - top) * layout.stride
        result = self.adb.shell(serial, f"screencap | tail -c +{start + 1} | head -c {length}")
        if result.exit_code != 0 or len(result.stdout) != length:
            return None
        return layout.image(result.stdout, bottom - top)

    def forget(self, serial: str) -> None:
        """An input is about to reach the device: no capture begun before now may be reused."""
        with self._lock:
            self._input_at[serial] = time.monotonic()
            self._last.pop(serial, None)

    def capture(self, serial: str) -> Capture:
        """A new capture of the screen (kept as the device's last one)."""
        started = time.monotonic()
        capture = self._capture(serial)
        capture.taken_at = started
        with self._lock:
            last = self._last.get(serial)
            if last is None or last.taken_at < started:
                self._last[serial] = capture
        return capture

    def _capture(self, serial: str) -> Capture:
        if serial not in self._png_only:
            result = self.adb.shell(serial, "screencap")
            if result.exit_code == 0:
                try:
                    layout = raw_layout(result.stdout)
                except CaptureError:
                    pass
                else:
                    if layout.offset in HEADERS:  # nothing printed before it: its rows can be cut out on the device
                        self._layouts[serial] = layout
                    image = layout.image(memoryview(result.stdout)[layout.offset :], layout.height)
                    return Capture(image, _warnings(result.stderr + result.stdout[:512]))
            self._png_only.add(serial)
        result = self.adb.shell(serial, "screencap -p")
        if result.exit_code != 0:
            message = (result.stderr or result.stdout).decode("utf-8", "replace").strip()[:300]
            raise BackendFailure(f"screencap failed on {serial} (exit {result.exit_code}): {message}")
        return Capture(parse_png(result.stdout), _warnings(result.stderr + result.stdout[:512]), "png")

    def dump_ui(self, serial: str) -> bytes:
        """The UI hierarchy XML; one retry on uiautomator's known failures, then a clear error."""
        failures: list[str] = []
        for _ in range(2):
            result = self.adb.shell(serial, f"rm -f {DUMP_PATH}; uiautomator dump {DUMP_PATH}")
            said = (result.stdout + result.stderr).decode("utf-8", "replace").strip()
            if result.exit_code == 0 and "ERROR" not in said:
                return self.adb.read_file(serial, DUMP_PATH)
            failures.append(said[:300] or f"exit code {result.exit_code}")
        hints = [hint for key, hint in _DUMP_HINTS.items() if any(key in f for f in failures)]
        raise BackendFailure(
            f"uiautomator dump failed twice on {serial}: {failures[-1]!r}"
            + (f" ({hints[0]}); try again in a moment" if hints else ""),
            attempts=failures,
        )


def _warnings(text: bytes) -> list[str]:
    if MULTI_DISPLAY in text:
        return ["The device has several displays; the default display was captured."]
    return []
