"""Issue 46, the data dir's lock held by something that is not lookout, and starts refused before serving:
`serve` and `supervise` tell lookout from anything else by what answers on daemon.sock, signal nothing they
cannot show is lookout, and `supervise` ends at once with the status and the reason. Real processes: util-linux
`flock` holding the lock for `sleep`, `lookout serve` and `lookout supervise` as the image runs them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, TOKEN, free_port


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A data dir whose daemon.lock `sleep` holds (through flock(1), which runs it with the lock)."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    holder = subprocess.Popen(["flock", "--exclusive", str(data / "daemon.lock"), "sleep", "600"])
    deadline = time.monotonic() + 30
    while b"FLOCK" not in Path("/proc/locks").read_bytes() or not (data / "daemon.lock").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.2)
    yield data, holder
    holder.kill()
    holder.wait()


def _lookout(*args: str, data: Path, timeout: float = 120, within: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """`lookout ARGS --data-dir DATA`; `within`: a command that runs it (as `unshare -m sh -c ...`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")} | {"LOOKOUT_TOKEN": TOKEN}
    command = [*within, sys.executable, "-m", "lookout", *args, "--data-dir", str(data)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def test_serve_beside_a_lock_held_by_sleep_names_it_and_offers_no_signal(
    locked: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    data, holder = locked
    done = _lookout("serve", "--port", str(free_port()), data=data)
    assert done.returncode == 1, done.stderr
    assert "not a lookout daemon" in done.stderr and "kill" not in done.stderr, done.stderr
    assert holder.poll() is None


def test_supervise_beside_a_lock_held_by_sleep_exits_non_zero_naming_it(
    locked: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    data, holder = locked
    done = _lookout("supervise", "--port", str(free_port()), data=data)
    assert done.returncode != 0, done.stderr
    assert "not a lookout daemon" in done.stderr and ("sleep" in done.stderr or "flock" in done.stderr), done.stderr
    assert "took over" not in done.stderr and done.stderr.count("started the daemon") == 1, done.stderr
    assert holder.poll() is None, "the lock's holder got no signal"


def test_supervise_ends_with_status_2_when_the_daemon_refuses_its_data_dir(tmp_path: Path) -> None:
    """A volume owned by another uid, as a bad volume mount gives in a container: the same command the image
    runs, without a container."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    os.chown(data, 12345, 12345)
    started = time.monotonic()
    done = _lookout("supervise", "--port", str(free_port()), data=data)
    print(f"supervise ended {time.monotonic() - started:.1f} s after its start")
    assert done.returncode == 2, done.stderr
    assert "refusing to start" in done.stderr and "refused to start" in done.stderr, done.stderr
    assert done.stderr.count("started the daemon") == 1, "not started again"


def test_supervise_ends_with_status_2_on_a_read_only_volume(tmp_path: Path) -> None:
    """A volume mounted read-only, in a mount namespace of the command's own (`unshare -m`: nothing is left
    mounted): the same command the image runs, without a container."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    read_only = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'
    done = _lookout("supervise", "--port", str(free_port()), data=data,
                    within=("unshare", "-m", "sh", "-c", read_only, "sh", str(data)))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Read-only file system" in done.stderr and "refused to start" in done.stderr, done.stderr
    assert done.stderr.count("started the daemon") == 1, "not started again"
    assert not (data / "daemon.lock").exists(), "nothing was written on the volume"

