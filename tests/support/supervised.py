"""`lookout supervise` (what the image runs) as a subprocess, and what it told its log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

from tests.conftest import REPO, TOKEN


def supervise(data: Path, port: int, log: BinaryIO, *options: str) -> subprocess.Popen[bytes]:
    """`lookout supervise [options]` on `port` for `data`, its output in `log`."""
    command = [sys.executable, "-m", "lookout", "supervise", *options, "--port", str(port), "--data-dir", str(data)]
    return subprocess.Popen(command, cwd=REPO, env={**os.environ, "LOOKOUT_TOKEN": TOKEN}, stdout=log, stderr=log)


def told(log: Path, line: str, times: int) -> bool:
    """Whether `line` is in the log exactly `times` times."""
    return log.read_text().count(line) == times
