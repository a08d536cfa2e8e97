"""The stop ladder lookout runs itself on a program's session when its holder cannot (lookout.terminal.process.ladder),
on real processes: it climbs until the program is gone, ends what is left of its session, and never signals a
process that is not the terminal's program. Which rung `ended_by` names depends on how soon a loaded machine lets
the program die; the signal that killed it does not (the kernel records a fatal signal when it is sent), so the
tests check the program's own exit status, with programs that take each signal's default action (`exec sleep`)."""

from __future__ import annotations

import signal
import subprocess
import time

from lookout.terminal.holder.pty import session_members
from lookout.terminal.journal.persistence import TerminalMeta
from lookout.terminal.process.ladder import end_program, program_runs, program_start
from tests.support.polling import eventually
from tests.support.processes import RUNGS, rungs_from, running


def _meta(pid: int, **fields: object) -> TerminalMeta:
    facts = {"created_at": time.time() - 1, "pid": pid, "program_start": program_start(pid), **fields}
    return TerminalMeta(id="t_0123456789", name="x", command="x", argv=["x"], cwd="/", cols=80, rows=24, engine="avt",
                        shell=False, **facts)  # type: ignore[arg-type]  # fmt: skip


def _leader(script: str) -> subprocess.Popen[bytes]:
    """`script` as the leader of a session of its own; returns once two processes of it run. Its stdin is a
    pipe, for a script that waits for the test (`read`)."""
    leader = subprocess.Popen(["bash", "-c", script], start_new_session=True, stdin=subprocess.PIPE)
    eventually(lambda: len([p for p in session_members(leader.pid) if running(p)]) >= 2, what="its job to start")
    return leader


def test_a_program_that_ignores_hangup_ends_on_sigterm_with_its_whole_session() -> None:
    leader = _leader("trap '' HUP; sleep 1000 & exec sleep 1000")
    meta = _meta(leader.pid)
    assert program_runs(meta)
    outcome = end_program(meta)
    assert outcome.ended_by in rungs_from("SIGTERM") and outcome.survivors == (), outcome
    assert leader.wait(5) == -signal.SIGTERM, "hung up in vain, it was the terminate rung that ended it"
    assert not [p for p in session_members(leader.pid) if running(p)] and not program_runs(meta)


def test_what_is_left_of_a_session_whose_leader_has_exited_is_ended() -> None:
    leader = _leader("(trap '' HUP; exec sleep 1000) & read -r _")
    meta = _meta(leader.pid)
    assert leader.stdin is not None
    leader.stdin.close()  # the leader's `read` ends: it exits, its job runs on
    leader.wait(10)
    left = [p for p in session_members(leader.pid) if running(p)]
    assert left and not program_runs(meta), "the program has exited, a job of its session runs on"
    outcome = end_program(meta)
    assert outcome.ended_by in rungs_from("SIGTERM") and outcome.survivors == (), "it ignores hangups"
    assert not any(running(p) for p in left)


def test_a_process_that_is_not_the_program_is_never_signalled() -> None:
    leader = _leader("sleep 1000 & exec sleep 1000")
    try:
        other_boot = _meta(leader.pid, program_start="another-boot:" + str(program_start(leader.pid)).split(":")[1])
        earlier = _meta(leader.pid, program_start=None, created_at=time.time() - 3600, journal_started_at=None)
        for meta in (other_boot, earlier):
            assert not program_runs(meta) and end_program(meta).ended_by is None
        assert running(leader.pid) and leader.poll() is None, "not signalled"
        by_time = _meta(
            leader.pid, program_start=None, journal_started_at=time.time()
        )  # a terminal of an earlier version
        assert program_runs(by_time)
        outcome = end_program(by_time)
        assert outcome.ended_by in RUNGS and outcome.survivors == (), outcome
        assert leader.wait(5) == -signal.SIGHUP, "the ladder's first rung, a hangup, ended it"
        assert not [p for p in session_members(leader.pid) if running(p)] and not program_runs(by_time)
    finally:
        leader.kill()
        leader.wait(5)
