"""A clean stop of the daemon, told apart from a crash in what its terminals say afterwards.

A clean stop (SIGTERM, SIGINT: `podman stop`, `docker stop`, `systemctl stop`) leaves the running terminals
to their holders; a container's stop then ends every process left in it, the holders too, without their
recording the programs' exits. So the daemon writes `clean-stop.json` in the data dir as it stops (when and
which terminals ran), and the next daemon reads and removes it as it starts: a terminal of that list whose
holder has gone without recording an exit says it was ended with the clean stop, not "was it killed?". A
crash (kill -9, the OOM killer) writes nothing. The file decides only that wording: a planted one makes no
terminal end or be adopted (it is read without following a link, and at most MARKER_LIMIT bytes of it).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from lookout.core.ids import SAFE_ID
from lookout.core.storage import atomic_write_json, read_json

log = logging.getLogger("lookout")

MARKER = "clean-stop.json"
MARKER_LIMIT = 1 << 20
"""The most of the marker read (ids of 10,000 terminals fit)."""
KILLED = "its holder ended without recording the program's exit (was it killed?)"
"""What a terminal whose holder ended says when no clean stop explains it."""


@dataclass(frozen=True)
class CleanStop:
    at: float
    pid: int
    terminals: frozenset[str]

    def reason(self, terminal_id: str) -> str | None:
        """What terminal `terminal_id` says when its holder has gone without recording its program's exit
        after this stop; None when it did not run at the stop (then a clean stop does not explain it)."""
        if terminal_id not in self.terminals:
            return None
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at))
        return (f"ended by the clean stop of the daemon (pid {self.pid}) at {at}: its holder ended with it "
                "without recording the program's exit, as a container's stop ends every process in it")  # fmt: skip


def record(data_dir: Path, running: list[str]) -> None:
    """The daemon stops cleanly, leaving `running` (terminal ids) to their holders."""
    try:
        atomic_write_json(data_dir / MARKER, {"at": time.time(), "pid": os.getpid(), "terminals": sorted(running)})
    except OSError as exc:
        log.warning("the clean stop is not recorded (%s): terminals it ends will say they were killed", exc)


def read(data_dir: Path) -> CleanStop | None:
    """The clean stop recorded last, if the daemon stopped cleanly last (None for a crash, or a marker
    that is not one)."""
    try:
        data = read_json(data_dir / MARKER, MARKER_LIMIT)
        at, pid, ids = data["at"], data["pid"], data["terminals"]
        if isinstance(at, (int, float)) and isinstance(pid, int) and isinstance(ids, list):
            return CleanStop(float(at), pid, frozenset(i for i in ids if isinstance(i, str) and SAFE_ID.fullmatch(i)))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        log.warning("%s in the data dir is not a clean stop's record, and is ignored: %s", MARKER, exc)
    return None


def take(data_dir: Path) -> CleanStop | None:
    """`read`, and remove the marker: the next stop says again whether it was clean."""
    stop = read(data_dir)
    try:
        (data_dir / MARKER).unlink(missing_ok=True)
    except OSError as exc:
        log.warning("%s in the data dir cannot be removed: %s", MARKER, exc)
    return stop
