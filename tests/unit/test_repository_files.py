"""What git tracks stays small: no file over 1 MB (a wheel, a dump, a recording belongs outside the repository;
`.gitignore` keeps what `make`, the tests and the benchmarks produce out of it)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO

MAX_BYTES = 1_000_000


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [name for name in listing.decode().split("\0") if name]


def test_no_tracked_file_is_over_1_mb() -> None:
    tracked = _tracked()
    assert tracked
    sizes = {name: (REPO / name).stat().st_size for name in tracked if (REPO / name).is_file()}
    too_big = {name: size for name, size in sizes.items() if size > MAX_BYTES}
    assert not too_big, f"tracked files over {MAX_BYTES} bytes: {too_big}"


@pytest.mark.parametrize(
    "made",
    ["dist/lookout-0.1.0-py3-none-any.whl", "py_spy-0.4.3-py2.py3-none-any.whl", ".bench-results.jsonl",
     ".venv/bin/python", "lookout.egg-info/PKG-INFO", "build/lib/app/__init__.py", "data/lookout.lock",
     "lookout/web/node_modules/x/index.js", ".mypy_cache/3.11/app.json", ".lock-venv/bin/pip"],
)  # fmt: skip
def test_made_and_downloaded_files_are_ignored(made: str) -> None:
    _tracked()
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "-q", made], cwd=REPO, check=False)
    assert ignored.returncode == 0, f"{made} is not covered by .gitignore"
