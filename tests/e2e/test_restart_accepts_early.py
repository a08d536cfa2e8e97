"""A hot restart holds no connection in the kernel's backlog (lookout.daemon.serve): the new daemon accepts on the
shared socket before the old one stops accepting, answers `GET /healthz` at once, and holds the requests that
need the terminals until it has adopted them: a terminal asked for then is answered as it is (never a 404), a
listing lists it, and a request that waits too long is told to send it again (503), never answered wrongly.

A new daemon that cannot take over (another process took the data dir's lock as the old one let go) tells the
requests it held to send them again (503), never answers them wrongly, and the old daemon serves again; one that
dies while taking over (killed the way the OOM killer kills) leaves the old one serving
everything again: what it had begun, what waited in the kernel meanwhile, the terminals and the data dir.

The old daemon is kept from letting go by a short request it has begun and cannot end (an input whose body the
test holds back): the events are then ordered by what the test does, not by how fast anything runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from lookout.daemon.lock import LOCK_FILE, lock_holder
from tests.conftest import REPO, Daemon
from tests.support.hands import bash_terminal
from tests.support.in_flight import InFlight
from tests.support.polling import eventually
from tests.support.tokenizer import tokenizer_mapped


def _restart(data: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "lookout", "restart", "--data-dir", str(data)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _new_daemon_answers(url: str, old_pid: int) -> int | None:
    """The pid of a daemon other than `old_pid` that answered `GET /healthz` on a new connection, or None."""
    pid = httpx.get(f"{url}/healthz", timeout=30).json()["pid"]
    return pid if pid != old_pid else None


def _held_input(daemon: Daemon, tid: str) -> InFlight:
    """An input the old daemon has begun (its headers read) and cannot end: its body is held back."""
    held = InFlight(
        daemon.port, daemon.token, f"/v1/terminals/{tid}/input", {"text": "echo HELD-$((2*3))\r"}, held=True
    )
    eventually(held.read_by_daemon, what="the old daemon to read the input's headers")
    return held


def _nices(pid: int) -> list[int]:
    """The nice values of the threads of process `pid` (those that end meanwhile left out)."""
    nices = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            nices.add(int((task / "stat").read_text().rsplit(")", 1)[1].split()[16]))
        except (FileNotFoundError, ProcessLookupError):
            continue
    return sorted(nices)


def _stopped_accepting(daemon: Daemon, old_pid: int) -> bool:
    return f"this daemon (pid {old_pid}) stops accepting".encode() in daemon.log.read_bytes()


@dataclass
class Restarting:
    """A hot restart under way: the new daemon accepts and the old one has stopped accepting, but still holds the
    data dir and the terminal, kept from letting go by `held` (an input it has begun, whose body is held back)."""

    daemon: Daemon
    data: Path
    api: httpx.Client
    tid: str
    before: dict[str, Any]
    held: InFlight
    restart: subprocess.Popen[str]
    old_pid: int
    new_pid: int

    def get_terminal(self) -> InFlight:
        return InFlight(self.daemon.port, self.daemon.token, f"/v1/terminals/{self.tid}", None)

    def echo_after(self) -> str:
        """The terminal's screen once a command sent now has printed (the terminal is served and takes input)."""
        act = self.api.post(f"/v1/terminals/{self.tid}/act", json={"input": {"text": "echo AFTER-$((2*4))\r"},
                            "until": {"regex": "AFTER-8"}, "timeout_ms": 30_000})  # fmt: skip
        assert act.status_code == 200 and act.json()["ended"] == "regex", act.text
        return "\n".join(act.json()["screen"]["text"])


@contextmanager
def _restarting(tmp_path: Path, **env: str) -> Iterator[Restarting]:
    data = tmp_path / "data"
    daemon = Daemon(data, LOOKOUT_BODY_TIMEOUT_S="600", **env).start()
    assert daemon.proc is not None
    old_pid = daemon.proc.pid
    with daemon.client(timeout=120) as api:
        tid = bash_terminal(api, tmp_path / "home")
        before = api.get(f"/v1/terminals/{tid}").json()
        held = _held_input(daemon, tid)
        restart = _restart(data)
        new_pid = eventually(lambda: _new_daemon_answers(daemon.url, old_pid), timeout=120,
                             what="the new daemon to answer /healthz")  # fmt: skip
        eventually(lambda: _stopped_accepting(daemon, old_pid), what="the old daemon to stop accepting")
        yield Restarting(daemon, data, api, tid, before, held, restart, old_pid, new_pid)
    daemon.finish()


def test_the_new_daemon_accepts_before_the_old_stops_and_answers_for_a_terminal_it_adopts(tmp_path: Path) -> None:
    with _restarting(tmp_path) as r:
        assert lock_holder(r.data) == r.old_pid, "the new daemon accepted while the old one still held the data dir"
        log = r.daemon.log.read_bytes()
        accepts = log.index(f"this daemon (pid {r.new_pid}) accepts on the shared socket".encode())
        assert accepts < log.index(f"this daemon (pid {r.old_pid}) stops accepting".encode()), (
            "new accepts, then old stops"
        )
        # The old daemon had counted tokens (its terminal's frames): the new one loaded the tokenizer before it
        # accepted, not on its first count after the hand-over, where the load holds its loop.
        assert tokenizer_mapped(r.new_pid), "the tokenizer is loaded when the new daemon accepts"
        assert log.index(f"this daemon (pid {r.new_pid}) loaded the tokenizer".encode()) < accepts
        # It prepared at a lower CPU priority (the old daemon serves meanwhile) and took its own back to accept.
        assert f"this daemon (pid {r.new_pid}) prepared at nice +10".encode() in log
        assert _nices(r.new_pid) == _nices(r.old_pid)[:1], "every thread of the new daemon has its priority back"

        # Sent while the old daemon holds the terminals: they reach the new one, which has not adopted them yet.
        one = r.get_terminal()
        listing = InFlight(r.daemon.port, r.daemon.token, "/v1/terminals", None)
        eventually(lambda: one.read_by_daemon() and listing.read_by_daemon(), what="the new daemon to read them")
        assert not one.answered() and not listing.answered(), "nothing is answered before the terminals are adopted"
        assert lock_holder(r.data) == r.old_pid

        r.held.send_body()  # the old daemon ends the input and lets go; the new one adopts and answers
        written = r.held.answer(120)
        assert written is not None and written[0] == 200, written
        answered, listed = one.answer(120), listing.answer(120)
        assert answered is not None and answered[0] == 200, answered
        assert answered[1]["id"] == r.tid and answered[1]["pid"] == r.before["pid"], answered
        assert answered[1]["status"] == "running", answered
        assert listed is not None and listed[0] == 200, listed
        assert [t["id"] for t in listed[1]["terminals"]] == [r.tid], listed

        out, err = r.restart.communicate(timeout=300)
        assert r.restart.returncode == 0 and f"the new daemon (pid {r.new_pid}) serves" in out, (out, err)
        assert lock_holder(r.data) == r.new_pid
        screen = r.echo_after()
        assert "HELD-6" in screen, "the held input was written (by the old daemon)"


def test_a_request_that_waits_longer_than_the_takeover_wait_is_told_to_send_it_again(tmp_path: Path) -> None:
    with _restarting(tmp_path, LOOKOUT_TAKEOVER_WAIT_S="1") as r:
        refused = r.get_terminal().answer(120)
        assert lock_holder(r.data) == r.old_pid, "refused while the old daemon still held the terminals"
        assert refused is not None and refused[0] == 503, refused
        assert refused[1]["error"]["code"] == "restarting", refused
        assert "LOOKOUT_TAKEOVER_WAIT_S" in refused[1]["error"]["message"], refused
        assert "send the request again" in refused[1]["error"]["message"], refused

        r.held.send_body()
        assert (written := r.held.answer(120)) is not None and written[0] == 200, written
        out, err = r.restart.communicate(timeout=300)
        assert r.restart.returncode == 0 and f"the new daemon (pid {r.new_pid}) serves" in out, (out, err)
        again = r.api.get(f"/v1/terminals/{r.tid}")
        assert again.status_code == 200 and again.json()["status"] == "running", again.text


def _ended(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie not yet reaped by its parent has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_new_daemon_killed_while_taking_over_leaves_the_old_one_serving_everything(tmp_path: Path) -> None:
    with _restarting(tmp_path) as r:
        os.kill(r.new_pid, signal.SIGKILL)
        eventually(lambda: _ended(r.new_pid), what="the new daemon to end")
        waiting = r.get_terminal()  # nobody accepts it yet

        r.held.send_body()  # the old daemon ends the input, lets go, finds the new one gone and takes everything back
        written = r.held.answer(120)
        assert written is not None and written[0] == 200, written
        answered = waiting.answer(120)
        assert answered is not None and answered[0] == 200, answered
        assert answered[1]["pid"] == r.before["pid"] and answered[1]["status"] == "running", answered
        out, err = r.restart.communicate(timeout=300)
        assert r.restart.returncode == 1 and "serves again" in err, (out, err)
        assert lock_holder(r.data) == r.old_pid
        assert httpx.get(f"{r.daemon.url}/healthz", timeout=30).json()["pid"] == r.old_pid
        screen = r.echo_after()
        assert screen.count("HELD-6") == 1, screen  # the held input's answer, written once


_LOCKER = "import fcntl, os, sys; fcntl.flock(os.open(sys.argv[1], os.O_RDWR), fcntl.LOCK_EX); sys.stdin.read()"


def _waits_for_lock(pid: int) -> bool:
    return any(
        line.split()[1:2] == ["->"] and str(pid) in line.split()
        for line in Path("/proc/locks").read_text().splitlines()
    )


def test_a_new_daemon_that_cannot_take_the_lock_refuses_what_it_held_and_the_old_one_serves_again(
    tmp_path: Path,
) -> None:
    with _restarting(tmp_path) as r:
        locker = subprocess.Popen([sys.executable, "-c", _LOCKER, str(r.data / LOCK_FILE)], stdin=subprocess.PIPE,
                                  text=True)  # fmt: skip
        try:
            eventually(lambda: _waits_for_lock(locker.pid), what="the other process to wait for the lock")
            waiting = r.get_terminal()
            eventually(waiting.read_by_daemon, what="the new daemon to read the request")
            os.kill(r.new_pid, signal.SIGSTOP)  # so the other process, not the new daemon, takes the lock first
            try:
                r.held.send_body()  # the old daemon ends the input and lets go of the lock
                eventually(lambda: lock_holder(r.data) == locker.pid, timeout=120, what="the other process to lock")
            finally:
                os.kill(r.new_pid, signal.SIGCONT)
            refused = waiting.answer(180)
            assert refused is not None and refused[0] == 503, refused
            assert refused[1]["error"]["code"] == "restarting", refused
            assert "could not take over" in refused[1]["error"]["message"], refused
            assert "send the request again" in refused[1]["error"]["message"], refused
        finally:
            locker.kill()  # lets go of the lock: the old daemon takes it back
            locker.wait()
        written = r.held.answer(120)
        assert written is not None and written[0] == 200, written
        out, err = r.restart.communicate(timeout=300)
        assert r.restart.returncode == 1 and "serves again" in err, (out, err)
        eventually(lambda: lock_holder(r.data) == r.old_pid, timeout=60, what="the old daemon to hold the lock again")
        assert _ended(r.new_pid)
        again = r.api.get(f"/v1/terminals/{r.tid}")
        assert again.status_code == 200 and again.json()["pid"] == r.before["pid"], again.text
        assert again.json()["status"] == "running", again.text
        assert httpx.get(f"{r.daemon.url}/healthz", timeout=30).json()["pid"] == r.old_pid
