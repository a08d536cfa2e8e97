"""The terminals of a data dir seen without the daemon, as `tmux ls` and `tmux kill-session` see tmux's: what
became of each (`lookout ls`), and ending them (`lookout kill`, and the daemon's DELETE of a terminal it does
not follow). Blocking: for the command line, or a thread.

A terminal is ended the same way with or without a daemon and with or without a live holder: its holder runs
the stop ladder when it answers; when it is gone (killed), does not answer (stopped) or cannot be trusted,
lookout runs the same ladder on the program's session itself (lookout.terminal.process.ladder). Either way the
answer is the signal after which the program was gone, or an error when something of it is still there. A
socket nobody listens on any more (its holder was killed) is removed when it is found.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lookout.core.errors import LookoutError, NotFound
from lookout.core.ids import check_id
from lookout.terminal.holder import protocol as proto
from lookout.terminal.journal.persistence import TerminalMeta, append_event, load_meta, save_meta
from lookout.terminal.journal.reader import read_kind
from lookout.terminal.process import clean_stop
from lookout.terminal.process import ladder as session_ladder

GREET_TIMEOUT_S = 5.0
"""How long a holder has to greet `ls` or `kill` (a holder that does not is stopped or stuck)."""
KILL_TIMEOUT_S = 15.0
"""How long a holder's stop ladder (about 7 s) may take before lookout runs it itself."""
LIVE = ("running", "unresponsive", "orphaned")
"""The statuses of `ls` under which something of the terminal may run (what `kill --all` ends)."""
_T = TypeVar("_T")
_R = TypeVar("_R")
WORKERS = 64
"""Terminals asked (`ls`) or ended (`kill`) at once: each mostly waits on its holder or its program, so many
take the time of about one (tmux's kill-session of many returns as fast as it can send SIGHUPs)."""


class NotEnded(Exception):
    """Something of the terminal still runs after the whole ladder, or lookout cannot tell what to end: the
    message says what."""


@dataclass(frozen=True, slots=True)
class Ending:
    """How lookout ended a terminal's program."""

    signal: str | None
    """The rung of the stop ladder after which it was gone (`SIGHUP`...); None: it had ended already."""
    code: int | None = None
    """Its exit code, when its holder reported it."""
    holder: bool = True
    """Whether its holder ran the ladder (else lookout did, on its session)."""
    why: str = ""
    """Why lookout ran it itself."""

    def __str__(self) -> str:
        code = "" if self.code is None else f" (exit {self.code})"
        if self.signal is None:
            return f"had ended already{code}" if not self.holder else f"ended{code}"
        itself = "" if self.holder else f"; lookout signalled its session itself: {self.why}"
        return f"ended by {self.signal}{code}{itself}"


@dataclass(frozen=True, slots=True)
class HeldTerminal:
    id: str
    name: str
    command: str
    pid: int | None
    status: str
    """`running` (its holder answered), `unresponsive` (its holder's socket takes connections and it does not
    answer: stopped, or stuck), `orphaned` (its holder is gone and its program runs on), `exited`, `lost`, or
    `unreadable` (its meta.json cannot be used)."""
    cols: int
    rows: int
    created_at: float
    note: str = ""


def terminals(data_dir: Path) -> list[HeldTerminal]:
    """Every terminal of the data dir, oldest first, with what became of it: its holder is asked when meta.json
    says it runs, or that it was lost (a holder may live on without a daemon that follows it)."""
    root, holders = data_dir / "terminals", data_dir / "holders"
    listed = sorted(root.iterdir()) if root.is_dir() else []
    directories = [d for d in listed if not d.is_symlink() and (d / "meta.json").is_file()]

    def seen(directory: Path) -> HeldTerminal:
        try:
            meta = load_meta(directory)
        except (OSError, ValueError, TypeError) as exc:
            created = directory.stat().st_mtime
            return HeldTerminal(directory.name, "", "", None, "unreadable", 0, 0, created, str(exc))
        return _held(holders, directory, meta)

    return sorted(in_parallel(seen, directories), key=lambda t: t.created_at)


def in_parallel(work: Callable[[_T], _R], items: Iterable[_T]) -> list[_R]:
    """`work` of each item, in the items' order, up to WORKERS at once (each in a thread)."""
    items = list(items)
    if len(items) < 2:
        return [work(item) for item in items]
    with ThreadPoolExecutor(min(WORKERS, len(items)), thread_name_prefix="lookout-holders") as pool:
        return list(pool.map(work, items))


def _held(holders: Path, directory: Path, meta: TerminalMeta) -> HeldTerminal:
    status, note, cols, rows = meta.status, meta.lost_reason or "", meta.cols, meta.rows
    if meta.status == "exited":
        note = f"exit {meta.exit_code}" if meta.ended_by is None else f"ended by {meta.ended_by}, exit {meta.exit_code}"
    else:
        try:
            greeting = greet(holders, meta)
            status, cols, rows = "running", greeting.get("cols", cols), greeting.get("rows", rows)
            note = f"its holder runs; the daemon lost it: {note}" if meta.status == "lost" else ""
        except (ConnectionRefusedError, FileNotFoundError):
            remove_stale_socket(holders, meta.id)
            status, note = _without_holder(directory, meta)
        except TimeoutError:
            status, note = "unresponsive", f"its holder does not answer within {GREET_TIMEOUT_S:.0f} s (stopped?)"
        except (ConnectionError, BlockingIOError) as exc:  # it listens, and is full or closed: at its limits
            status, note = "unresponsive", f"its holder takes no connection now ({exc.strerror or exc!r})"
        except (OSError, proto.ProtocolError) as exc:
            status = "orphaned" if session_ladder.program_runs(meta) else "lost"
            note = f"its holder's socket is not to be trusted: {exc}"
    return HeldTerminal(meta.id, meta.name, meta.command, meta.pid, status, cols, rows, meta.created_at, note)


def _without_holder(directory: Path, meta: TerminalMeta) -> tuple[str, str]:
    """(status, note) of a terminal whose holder is gone."""
    code = recorded_exit(directory)
    if code is not None:
        return "exited", f"exit {code}, while no daemon followed it"
    if session_ladder.program_runs(meta):
        return "orphaned", f"its holder is gone, its program runs on as pid {meta.pid} (`lookout kill` ends it)"
    stop = clean_stop.read(directory.parent.parent)
    return "lost", meta.lost_reason or (stop.reason(meta.id) if stop else None) or clean_stop.KILLED


def recorded_exit(directory: Path) -> int | None:
    """The exit code the holder recorded in the journal, if it did."""
    try:
        exits = read_kind(directory, "x")
    except (OSError, LookoutError):
        return None
    return exits[-1].value if exits else None


def end(holders: Path, directory: Path, meta: TerminalMeta | None, holder_failed: str | None = None) -> Ending:
    """End the program of the terminal whose files are in `directory`: its holder's stop ladder, or, when its
    holder is gone, does not answer or cannot be trusted (or `holder_failed` says why it was tried already),
    the same ladder run on its session here (`meta` says what the program is; without it, only a holder can
    end it). NotEnded when something of it is still there, or when what to end is unknown."""
    why = holder_failed or _try_holder(holders, directory.name, meta)
    if isinstance(why, Ending):
        return why
    if meta is None:
        raise NotEnded(f"{why}, and its meta.json cannot be used, so lookout does not know its program: end it "
                       f"yourself if it runs, then remove {directory}")  # fmt: skip
    outcome = session_ladder.end_program(meta)
    if outcome.survivors:
        raise NotEnded(f"{why}; processes of its session are still there after SIGKILL: "
                       f"{', '.join(map(str, outcome.survivors))}")  # fmt: skip
    return Ending(outcome.ended_by, recorded_exit(directory), holder=False, why=why)


def _try_holder(holders: Path, terminal_id: str, meta: TerminalMeta | None) -> Ending | str:
    """How the holder ended the program, or why it could not."""
    try:
        return _through_holder(holders, terminal_id, meta)
    except (ConnectionRefusedError, FileNotFoundError):
        remove_stale_socket(holders, terminal_id)
        return "its holder is gone"
    except TimeoutError as exc:
        return str(exc) if "holder" in str(exc) else "its holder does not answer"
    except (OSError, proto.ProtocolError) as exc:
        return f"its holder cannot be used ({exc})"


def kill(data_dir: Path, terminal_id: str, *, followed: bool) -> Ending:
    """`lookout kill ID`: end the terminal (see `end`), and record the end in its meta.json, unless a daemon
    that `followed` it hears it from its holder and records it (its holder records only the exit code, in the
    journal, not the signal it ended the program with)."""
    try:
        check_id(terminal_id, "terminal")
    except NotFound:
        raise NotEnded("not a terminal id") from None
    directory, holders = data_dir / "terminals" / terminal_id, data_dir / "holders"
    try:
        meta: TerminalMeta | None = load_meta(directory)
    except FileNotFoundError:
        meta = None
        if not (holders / proto.socket_name(terminal_id)).exists():
            raise NotEnded("no such terminal") from None
    except (OSError, ValueError, TypeError):
        meta = None
    ending = end(holders, directory, meta)
    if not (ending.holder and followed) and meta is not None and meta.status != "exited":
        record_end(directory, meta, ending)
    return ending


def end_lost(holders: Path, directory: Path, meta: TerminalMeta, meta_known: bool, holder_failed: str | None) -> Ending:
    """The daemon's DELETE of a terminal it does not follow (`lost`): `end`, then `meta` says it exited, and so
    do its files (`record_end`), unless `meta` only stands in for a meta.json that cannot be used
    (`meta_known` false: only a holder can then end the program, and nothing is written)."""
    ending = end(holders, directory, meta if meta_known else None, holder_failed)
    if meta_known:
        record_end(directory, meta, ending)
    else:
        _ended(meta, ending)
    return ending


def record_end(directory: Path, meta: TerminalMeta, ending: Ending) -> None:
    """The program ended while no daemon followed its holder (or without it): meta.json says `exited`, with the
    exit code when known, after which signal, and events.jsonl says so."""
    _ended(meta, ending)
    save_meta(directory, meta)
    how = {"reason": f"ended without its holder: {ending.why}"} if not ending.holder else {}
    append_event(directory, {"type": "exited", "exit_code": ending.code, "ended_by": ending.signal, **how})


def _ended(meta: TerminalMeta, ending: Ending) -> None:
    meta.status, meta.exit_code, meta.ended_by = "exited", ending.code, ending.signal
    meta.ended_at = meta.ended_at or time.time()


def stop_unlisted(holders: Path, terminal_id: str, timeout: float = GREET_TIMEOUT_S) -> bool:
    """Have the holder of a terminal nobody was told of (its daemon was killed in the middle of opening it,
    between handing its holder the spec and listing it) end its program, without waiting for it; when nobody
    listens, remove its socket. Whether a holder was told to (one silent for `timeout` s is not)."""
    try:
        _told_to_stop(holders, terminal_id, None, timeout).close()
    except (ConnectionRefusedError, FileNotFoundError):
        remove_stale_socket(holders, terminal_id)
        return False
    except (OSError, proto.ProtocolError):
        return False
    return True


def remove_stale_socket(holders: Path, terminal_id: str) -> None:
    """Remove a terminal's socket if nobody listens on it (its holder was killed); a socket that is a link,
    not a socket, or someone else's is left alone (the daemon refuses it)."""
    dir_fd = proto.open_dir(holders)
    name = proto.socket_name(terminal_id)
    try:
        proto.check_socket(dir_fd, name)
        before = os.lstat(name, dir_fd=dir_fd)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as probe:
            probe.connect(proto.via_fd(dir_fd, name))
    except ConnectionRefusedError:
        after = os.lstat(name, dir_fd=dir_fd)
        if (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino):
            os.unlink(name, dir_fd=dir_fd)
    except (OSError, proto.ProtocolError):
        pass
    finally:
        os.close(dir_fd)


def greet(holders: Path, meta: TerminalMeta) -> dict[str, Any]:
    """The greeting of the terminal's holder, checked as the daemon checks it (ProtocolError): its socket's
    owner, its peer's credentials, its id and its program's pid. OSError when nobody listens, TimeoutError
    when it does not answer."""
    sock = proto.connect(holders, meta.id, GREET_TIMEOUT_S)
    with sock:
        greeting, master = proto.hello(sock)
        if master is not None:
            os.close(master)
        proto.check_greeting(greeting, meta.id, meta.pid)
        sock.shutdown(socket.SHUT_RDWR)
        return greeting


def _through_holder(holders: Path, terminal_id: str, meta: TerminalMeta | None) -> Ending:
    """The holder's stop ladder. TimeoutError when the holder does not greet, or does not report the exit in
    time; ConnectionError when it goes away without reporting it."""
    with _told_to_stop(holders, terminal_id, meta) as sock:
        lines = proto.LineBuffer()
        deadline = time.monotonic() + KILL_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            data = sock.recv(65536)
            if not data:
                raise ConnectionResetError("its holder went away without reporting the program's exit")
            for message in lines.feed(data):
                if message["op"] == "exit":
                    signal = message.get("signal")
                    return Ending(signal if isinstance(signal, str) else None, int(message["code"]))
        raise TimeoutError(f"its holder did not end the program within {KILL_TIMEOUT_S:.0f} s")


def _told_to_stop(
    holders: Path, terminal_id: str, meta: TerminalMeta | None, timeout: float = GREET_TIMEOUT_S
) -> socket.socket:
    """A connection to the terminal's holder, greeted and checked (its program's pid any when `meta` is not
    known), that has asked it for its stop ladder. OSError or ProtocolError when it could not be."""
    sock = proto.connect(holders, terminal_id, timeout)
    try:
        greeting, master = proto.hello(sock)
        if master is not None:
            os.close(master)
        proto.check_greeting(greeting, terminal_id, meta.pid if meta else None, known=meta is not None)
        sock.sendall(proto.encode("stop"))
    except BaseException:
        sock.close()
        raise
    return sock
