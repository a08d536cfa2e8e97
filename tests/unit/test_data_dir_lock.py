"""The data dir's lock (lookout.daemon.lock): `free` says whether anybody holds it without /proc/locks, and
agrees with `lock_holder`, which asks the kernel who."""

from __future__ import annotations

import os
from pathlib import Path

from lookout.daemon.lock import DataDirLock, free, lock_holder


def test_free_agrees_with_the_kernel_and_leaves_the_lock_to_take(tmp_path: Path) -> None:
    assert free(tmp_path) and lock_holder(tmp_path) is None, "no lock file: nobody holds it"
    lock = DataDirLock(tmp_path)
    lock.acquire()
    try:
        assert not free(tmp_path), "held (by another open file of this very process: flock locks are per open file)"
        assert lock_holder(tmp_path) == os.getpid()
    finally:
        lock.release()
    assert free(tmp_path) and lock_holder(tmp_path) is None
    again = DataDirLock(tmp_path)
    again.acquire()  # the probe left nothing behind that keeps a daemon from taking it at once
    try:
        assert not free(tmp_path)
    finally:
        again.release()
