"""Playwright, adbutils and the tokenizer are imported on their first use (issue 20), in a worker thread so the
event loop goes on meanwhile, and two first uses at once share one import and one client. Each check runs in
a fresh interpreter (this test process has them loaded) against the real Chromium or the real adb server."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.adb_fixtures import MakeDevice
from tests.support.adb_server import AdbServer

REPO = Path(__file__).resolve().parents[2]

WATCH = """
import asyncio, json, sys, threading

imported_on = {}

class Watch:
    \"\"\"Notes the thread that imports each watched module (asked only when it is not yet imported).\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name in ("playwright.async_api", "adbutils", "quicktok"):
            imported_on.setdefault(name, threading.current_thread().name)
        return None

sys.meta_path.insert(0, Watch())
"""

FIRST_PAGES = WATCH + """
from lookout.browser.browser import BrowserHost

async def main():
    host = BrowserHost(None)
    first, second = await asyncio.gather(host.browser(), host.browser())
    same = first is second
    await host.stop()
    print(json.dumps({"same": same, "imported_on": imported_on}))

asyncio.run(main())
"""

FIRST_DEVICES = WATCH + """
from pathlib import Path
from lookout.core.events import EventBus
from lookout.device.adb import Adb
from lookout.device.registry import DeviceRegistry

async def main():
    adb = Adb("127.0.0.1", int(sys.argv[1]), 10)
    manager = DeviceRegistry(Path(sys.argv[2]), adb, 1000, EventBus())
    first, second = await asyncio.gather(manager.describe_all(), manager.describe_all())
    listed = imported_on.copy()
    ui = await manager.get(first[0]["serial"]).ui(obs_id=None, all_nodes=False, max_tokens=300)
    print(json.dumps({"lists": [first, second], "listed": listed, "ui": ui, "imported_on": imported_on}))
    manager.shutdown()

asyncio.run(main())
"""


def run_fresh(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_two_first_browser_starts_import_playwright_once_in_a_worker_thread() -> None:
    result = run_fresh(FIRST_PAGES)
    assert result["same"]  # one browser for both
    assert set(result["imported_on"]) == {"playwright.async_api"}
    assert result["imported_on"]["playwright.async_api"] != "MainThread"


def test_device_first_uses_import_adbutils_and_the_tokenizer_off_the_loop(adb_server: AdbServer,
                                                                     make_device: MakeDevice) -> None:  # fmt: skip
    _, serial = make_device(model="Pixel 7")
    with tempfile.TemporaryDirectory() as devices:
        result = run_fresh(FIRST_DEVICES, str(adb_server.port), devices)
    first, second = result["lists"]
    assert first == second and [d["serial"] for d in first] == [serial]
    assert first[0]["model"] == "Pixel 7"
    assert set(result["listed"]) == {"adbutils"}  # listing counts no tokens
    assert result["imported_on"]["adbutils"].startswith("adb")  # the manager's adb threads
    assert 0 < result["ui"]["tokens"] <= 300  # counted: the first token count, a UI listing
    assert result["imported_on"]["quicktok"] != "MainThread"
