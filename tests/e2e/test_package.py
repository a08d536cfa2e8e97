"""The distribution as pip builds it: one import package named after it, with the web UI and the shell files."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_holds_one_top_level_package_named_lookout(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "lookout", source / "lookout", ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps", "-w",
                    tmp_path / "dist", source], check=True, capture_output=True)  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("lookout-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"lookout"}
    for inside in ("lookout/web/index.html", "lookout/clients/mcp/server.py", "lookout/terminal/holder/loop.py"):
        assert inside in names, inside
    assert any(name.startswith("lookout/terminal/process/shell/") for name in names)
    assert not any("node_modules" in name for name in names)
