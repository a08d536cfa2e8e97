"""Start-up stays light: the daemon's modules import neither Playwright, adbutils, the tokenizer, Pillow,
httpx nor wcwidth's tables, nor the code of devices and of pages, which load on first use (issues 20 and 36: the start is the floor
of every restart). Checked in a fresh interpreter, since this test process has them loaded."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("playwright", "adbutils", "quicktok", "PIL", "httpx", "mcp", "wcwidth")
FIRST_USE = ("lookout.device.device", "lookout.device.ui_tree", "lookout.browser.page", "lookout.browser.snapshot_view",
             "lookout.browser.action_kinds", "lookout.api.devices", "lookout.api.pages", "lookout.schemas.device", "lookout.schemas.page")

BUILD_APP = """
import json, sys, tempfile
from pathlib import Path
import lookout.cli
from lookout.config import Settings
from lookout.server import create_app
create_app(Settings(data_dir=Path(tempfile.mkdtemp()) / "data", token="start-up-token-0123456789"))
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules} | set(sys.modules))))
"""


def test_building_the_app_imports_no_heavy_backend() -> None:
    done = subprocess.run([sys.executable, "-c", BUILD_APP], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert "fastapi" in loaded  # the check sees the app's imports
    assert loaded.isdisjoint(HEAVY), sorted(loaded.intersection(HEAVY))
    assert loaded.isdisjoint(FIRST_USE), sorted(loaded.intersection(FIRST_USE))
