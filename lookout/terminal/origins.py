"""How a terminal comes to be, in one of four ways (the registry, lookout.terminal.registry, chooses which):

- `start`: a new terminal, its program started under a holder of its own;
- `adopt`: one an earlier run of the daemon left running (or lost): its screen, blocks and last input taken
  up from its files, then followed through its holder again;
- `recover`: one that had ended (or was lost), dormant: its files are served, and nothing is followed;
- `unusable`: one whose files fail: listed `lost` with the reason, and never adopted again by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from lookout.core.events import EventBus
from lookout.core.storage import dumps, jsonl_line
from lookout.terminal.dormant import Dormant, recorded
from lookout.terminal.holder.protocol import ProtocolError
from lookout.terminal.journal import persistence as files
from lookout.terminal.journal.follower import JournalFollower
from lookout.terminal.journal.reader import raw_size, stored_from
from lookout.terminal.places import Place
from lookout.terminal.process import ladder as session_ladder
from lookout.terminal.process import shell_integration
from lookout.terminal.process.clean_stop import CleanStop
from lookout.terminal.process.holder_link import HolderLauncher, greeting, reach
from lookout.terminal.screen.replay import PastScreen, screen_at
from lookout.terminal.session import SessionLimits, TerminalSession
from lookout.timeline.recording import Recorder

log = logging.getLogger(__name__)


async def start(
    meta: files.TerminalMeta,
    place: Place,
    root: Path,
    env: dict[str, str],
    limits: SessionLimits,
    holders: Path,
    launcher: HolderLauncher,
    *,
    bus: EventBus,
    recorder: Recorder,
) -> TerminalSession:
    """Start the program under a holder of its own (forked by `launcher`, with the files and socket of
    `place`, whose id is the terminal's; `holders`: where the holders' sockets are) and follow it; its files
    become `root`/<id>. No holder to take the spec raises HolderError, and leaves nothing of the terminal
    behind; a holder that cannot take it up says why, and the terminal is then lost with that reason."""
    try:
        launch = shell_integration.launch(meta, env)
        opened_at = time.time()
        spec = {
            "id": meta.id, "socket_dir": str(holders), "argv": launch.argv, "cwd": meta.cwd, "env": launch.env,
            "cols": meta.cols, "rows": meta.rows, "nonce": launch.nonce, "rc": launch.rc,
            "max_journal_bytes": limits.max_journal_bytes,
            "started_at": opened_at,
        }  # fmt: skip
        try:
            started = await launcher.start(spec, place.holder_fds)
        finally:
            place.handed_over()
        meta.pid, meta.journal_started_at = started.greeting["pid"], opened_at
        try:  # the holder starts the program while the session is made
            meta.program_start = session_ladder.program_start(meta.pid)
            session = TerminalSession(meta, root / meta.id, limits, holders=holders, bus=bus, recorder=recorder)
            session.screen_model.start()
            created = files.event_record({"type": "created", "pid": meta.pid})
            directory = place.settle(root, dumps(meta.to_json()), jsonl_line(created))
        except BaseException:  # (a full disk: not started)
            started.close()
            _kill(meta.pid)
            raise
    except BaseException:
        place.discard()
        raise
    session.follow(JournalFollower(directory, 0, meta.journal_epoch)).follow_holder(started)
    return session


async def adopt(
    directory: Path,
    limits: SessionLimits,
    holders: Path,
    *,
    bus: EventBus,
    recorder: Recorder,
    stopped: CleanStop | None = None,
) -> TerminalSession:
    """A terminal an earlier run of the daemon left running (or lost): its screen and blocks taken up from
    the last snapshot and rebuilt from the journal, then followed through its holder again. A holder that
    has ended leaves the terminal `exited` with the exit code it recorded (or `lost`, with the reason, when
    it recorded none: `stopped`, the daemon's clean stop before, may explain it); one that cannot be trusted or
    understood, or files from which its screen cannot be rebuilt (a damaged journal, a screen engine that fails),
    leave it `lost` with the reason. Its files are read, and its holder reached, in one call in a worker
    (`taken_up`); the holder's answer is awaited on the loop (`adopted`)."""
    found = await asyncio.to_thread(
        lambda: taken_up(directory, files.load_meta(directory), limits, holders, bus, recorder)
    )
    return await adopted(found, stopped)


async def adopted(found: Found, stopped: CleanStop | None = None) -> TerminalSession:
    """The terminal `found` (`taken_up`) once its holder has answered (awaited on the loop: many holders
    greeted at once hold no thread while they answer); see `adopt`."""
    session, meta, directory = found.session, found.session.meta, found.session.directory
    if found.failure is not None:
        log.warning("terminal %s is not adopted: its screen cannot be rebuilt: %s", meta.id, found.failure)
        session.readopt = False
        return session.lose(f"its screen cannot be rebuilt from its files: {found.failure}")
    assert found.past is not None and found.follower is not None and found.holder is not None
    session.screen_model.take_up(found.past)
    try:
        if isinstance(found.holder, Exception):
            raise found.holder
        holder = await greeting(found.holder, meta.id, meta.pid)
    except ProtocolError as exc:
        found.follower.close()
        log.warning("terminal %s is not adopted: %s", meta.id, exc)
        return session.lose(str(exc))
    except OSError:  # its holder has ended: the journal is read to its end
        session.follow(found.follower, found.saved.cwd).without_holder(stopped.reason(meta.id) if stopped else None)
        return session
    answer_from = int(holder.greeting.get("size") or 0)  # the queries before were asked of no daemon: too late
    session.follow(found.follower, found.saved.cwd, answer_from).follow_holder(holder)
    if meta.status != "running":  # adopted again, after it was lost
        meta.status, meta.lost_reason = "running", None
        session.writes("meta.json", files.save_meta, directory, meta)
        session.writes("events.jsonl", files.append_event, directory, {"type": "adopted"})
    return session


@dataclass(slots=True)
class Found:
    """What `taken_up` found of a terminal being adopted."""

    session: TerminalSession
    saved: files.SavedScreen
    failure: Exception | None = None
    """Why its files cannot be taken up, or its screen rebuilt (it is lost)."""
    past: PastScreen | None = None
    follower: JournalFollower | None = None
    holder: socket.socket | Exception | None = None
    """A connection that has greeted its holder (`reach`), or why there is none: ProtocolError (not to be
    trusted), OSError (nobody listens: it has ended)."""


def taken_up(
    directory: Path, meta: files.TerminalMeta, limits: SessionLimits, holders: Path, bus: EventBus, recorder: Recorder
) -> Found:
    """The session of a terminal being adopted (`meta`: its meta.json), with what its files say (its blocks,
    its inputs and hands, the last snapshot's state), its screen rebuilt from the snapshot's offset (from its
    checkpoint), its journal followed from there, its deltas' file open, and its holder reached. Blocking."""
    size, saved = raw_size(directory), files.load_snapshot(directory)
    resume_at = min(saved.raw_offset or 0, size)
    session = TerminalSession(meta, directory, limits, holders=holders, bus=bus, recorder=recorder, offset=resume_at)
    found = Found(session, saved)
    try:
        if saved.raw_offset is None:
            raise ValueError("screen.snapshot.json's raw_offset is not an offset")
        session.screen_model.title = saved.title
        session.screen_model.bracketed_paste = saved.bracketed_paste
        session.blocks.restore(saved.blocks)
        session.hands.take_up(size, session.blocks)
        found.past = screen_at(directory, meta, resume_at, limits.scrollback, near=saved.checkpoint)
        session.screen_model.open_deltas()
    except Exception as exc:  # noqa: BLE001 (damaged files, an engine that fails: this terminal, never the daemon)
        found.failure = exc
        return found
    found.follower = JournalFollower(directory, resume_at, meta.journal_epoch)
    try:
        found.holder = reach(holders, meta.id)
    except (ProtocolError, OSError) as exc:
        found.holder = exc
    except BaseException:
        found.follower.close()
        raise
    return found


def recover(
    directory: Path,
    meta: files.TerminalMeta,
    limits: SessionLimits,
    holders: Path,
    *,
    bus: EventBus,
    recorder: Recorder,
    recorded: bool = False,
) -> TerminalSession:
    """A terminal from an earlier run of the daemon that had ended (or was lost: see TerminalSession.readopt);
    `recorded`: one shown from its record only (a read-only lookout serving a replay archive), `lost` if the
    record says it ran on, and never adopted. Blocking."""
    if recorded and meta.status == "running":
        meta.status, meta.lost_reason = "lost", "shown from its record: its program went on elsewhere"
    session = TerminalSession(
        meta, directory, limits, holders=holders, bus=bus, recorder=recorder, offset=raw_size(directory)
    )
    session.stored_from = stored_from(directory)
    session.readopt = not recorded
    saved = files.load_snapshot(directory)
    session.screen_model.title = saved.title
    session.reported_cwd = saved.cwd
    session.blocks.forged = saved.forged
    session.hands.take_up(session.raw_offset, session.blocks)
    return session


@dataclass(frozen=True, slots=True)
class ToAdopt:
    """A terminal an earlier run left running, listed from its files (`record`, as an exited one's) until it is
    adopted: `read_up` again with its meta."""

    record: Dormant


def read_up(
    directory: Path, limits: SessionLimits, holders: Path, engine: str, bus: EventBus, recorder: Recorder, *,
    record: bool, adopting: bool, later: bool = False, meta: files.TerminalMeta | None = None,
) -> TerminalSession | Dormant | Found | ToAdopt:  # fmt: skip
    """What the files of `directory` make, before any holder answers: an exited terminal's record (`record`;
    lookout.terminal.dormant), a running one `taken_up` (`adopting`; `later`: only listed, ToAdopt), else its
    session recovered, or `unusable` when its files fail (`meta`: its meta.json, when read already). Blocking:
    one call in a worker a terminal."""
    try:
        meta = meta or files.load_meta(directory)
        if record and meta.status == "exited":
            with contextlib.suppress(Exception):  # its files fail: `recover` says how
                return recorded(directory, meta)
        if meta.status == "running" and adopting:
            if later:
                with contextlib.suppress(Exception):  # its files fail: `taken_up` says how, when it is adopted
                    return ToAdopt(recorded(directory, meta))
            return taken_up(directory, meta, limits, holders, bus, recorder)
        return recover(directory, meta, limits, holders, bus=bus, recorder=recorder, recorded=not adopting)
    except Exception as exc:  # noqa: BLE001 (one terminal's damaged files never stop the daemon)
        return unusable_because(directory, meta, exc, limits, holders, engine=engine, bus=bus, recorder=recorder)


def unusable_because(
    directory: Path, meta: files.TerminalMeta | None, exc: Exception, limits: SessionLimits, holders: Path, *,
    engine: str, bus: EventBus, recorder: Recorder,
) -> TerminalSession:  # fmt: skip
    """`unusable`, for `exc` raised while its files were read (logged)."""
    what = "meta.json cannot be used" if meta is None else "files cannot be loaded"
    log.warning("terminal %s is lost: its %s: %s", directory.name, what, exc)
    return unusable(directory, meta, f"its {what}: {exc}", limits, holders, engine=engine, bus=bus, recorder=recorder)


def unusable(
    directory: Path,
    meta: files.TerminalMeta | None,
    reason: str,
    limits: SessionLimits,
    holders: Path,
    *,
    engine: str,
    bus: EventBus,
    recorder: Recorder,
) -> TerminalSession:
    """A terminal whose files fail (its meta.json cannot be used, or loading it failed): listed `lost` with
    the reason, never adopted again by itself. Without a meta, a stand-in one (never written) names it,
    and nothing but its holder can end its program."""
    session = TerminalSession(
        meta or _stand_in(directory, engine), directory, limits, holders=holders, bus=bus, recorder=recorder,
        offset=raw_size(directory),
    )  # fmt: skip
    session.readopt, session.meta_known = False, meta is not None
    session.meta.status, session.meta.lost_reason = "lost", reason  # not written: its files stay as they are
    return session


def _stand_in(directory: Path, engine: str) -> files.TerminalMeta:
    return files.TerminalMeta(
        id=directory.name, name=directory.name, command="", argv=[], cwd="", cols=80, rows=24, engine=engine,
        shell=False, created_at=directory.stat().st_mtime, status="lost",
    )  # fmt: skip


def _kill(pid: int | None) -> None:
    """End a program whose holder could not be followed (its holder then ends with it)."""
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
