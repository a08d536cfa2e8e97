"""Reading a device's screen and UI over adb (synchronous: run in a worker thread).

Captures use raw `screencap` (encoded on the host: the device's PNG encoder is the slow part) and fall
back to `screencap -p` for a device whose raw output cannot be read; the choice is remembered per device.
UI dumps go through a file (`uiautomator dump` writes its errors to stdout and exits 0, so its output is
checked) and are retried once on uiautomator's known transient failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PIL import Image

from app.core.errors import BackendFailure
from app.device.adb import Adb
from app.device.capture import CaptureError, parse_png, parse_raw

DUMP_PATH = "/data/local/tmp/lookout-window.xml"
MULTI_DISPLAY = b"Multiple displays"
_DUMP_HINTS = {
    "null root node": "the screen had no window to read (it may be changing or locked)",
    "could not get idle state": "the app kept its UI busy (animations or constant updates)",
}


@dataclass
class Capture:
    image: Image.Image
    warnings: list[str] = field(default_factory=list)
    method: str = "raw"


class Observer:
    """Captures and dumps of the devices of one adb server."""

    def __init__(self, adb: Adb) -> None:
        self.adb = adb
        self._png_only: set[str] = set()

    def capture(self, serial: str) -> Capture:
        if serial not in self._png_only:
            result = self.adb.shell(serial, "screencap")
            if result.exit_code == 0:
                try:
                    return Capture(parse_raw(result.stdout), _warnings(result.stderr + result.stdout[:512]))
                except CaptureError:
                    pass
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
