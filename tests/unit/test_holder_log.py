"""The holder's log is capped as a whole: a real process writing to a real holder.log on fd 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

WRITER = """
import sys
from lookout.terminal.holder import holder_log
holder_log.log("before the cap is kept: not counted against it")
holder_log.LOG_CAP = int(sys.argv[1])
holder_log.keep_to_cap()
for n in range(5000):
    holder_log.log(f"line {n} " + "x" * 80)
"""


def test_holder_log_stops_at_its_cap_with_one_line_saying_so(tmp_path: Path) -> None:
    path = tmp_path / "holder.log"
    path.write_bytes(b"x" * 1000 + b"\n")  # what an earlier run left counts
    with path.open("ab") as log:
        subprocess.run([sys.executable, "-c", WRITER, "8192"], cwd=REPO, stderr=log, check=True, timeout=60)
    text = path.read_text()
    lines = text.splitlines()
    assert 8192 - 200 < len(text) <= 8192 + 200, len(text)
    assert lines[-1].endswith("holder: holder.log is at its cap (8192 bytes): later lines are dropped"), lines[-1]
    assert sum("at its cap" in line for line in lines) == 1
    assert "line 0 " in text and "line 4999" not in text
