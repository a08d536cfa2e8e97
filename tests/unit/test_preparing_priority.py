"""A hot restart's new daemon prepares at a lower CPU priority and takes it back, for every thread it has then,
only where it can take it back (lookout.daemon.priority). Each case runs in a process of its own: a nice value,
once lowered, stays with the process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

PROBE = """
import json, os, threading
from lookout.daemon import priority
own = os.getpriority(os.PRIO_PROCESS, 0)
lowered = priority.lower()
during = os.getpriority(os.PRIO_PROCESS, 0)
started = threading.Event()
worker = threading.Thread(target=started.wait, daemon=True)
worker.start()
def nices():
    return sorted({int(open(f"/proc/self/task/{t}/stat").read().rsplit(")", 1)[1].split()[16])
                   for t in os.listdir("/proc/self/task")})
threads_during = nices()
if lowered is not None:
    priority.take_back(lowered)
print(json.dumps({"own": own, "lowered": lowered, "during": during, "threads_during": threads_during,
                  "after": nices()}))
started.set()
"""


def _probe(*wrapper: str) -> dict[str, object]:
    done = subprocess.run([*wrapper, sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    return json.loads(done.stdout)


def _can_raise_priority() -> bool:
    return _probe()["lowered"] is not None


def test_it_prepares_lower_and_every_thread_takes_its_priority_back() -> None:
    if not _can_raise_priority():
        pytest.skip("this process may not raise a priority again (no CAP_SYS_NICE): the next test covers it")
    seen = _probe()
    own = seen["own"]
    assert isinstance(own, int)
    assert seen["lowered"] == own and seen["during"] == min(own + 10, 19)
    assert seen["threads_during"] == [min(own + 10, 19)], "a thread started while preparing inherits the lower one"
    assert seen["after"] == [own], "every thread has its priority back"


def test_where_it_could_not_take_it_back_it_prepares_at_its_own_priority() -> None:
    seen = _probe("setpriv", "--bounding-set=-sys_nice", "prlimit", "--nice=0", "--")
    assert seen["lowered"] is None
    assert seen["during"] == seen["own"] and seen["after"] == [seen["own"]]
