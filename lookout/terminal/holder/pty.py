"""A terminal's program on its PTY: starting it as the leader of a session of its own, reading what it wrote,
and the signals that end it (the stop ladder: hang up, terminate, kill, sent to its whole session)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import termios
from dataclasses import dataclass
from typing import Any, NoReturn

NONCE_FD = "LOOKOUT_NONCE_FD"
"""The variable that tells the shell which descriptor it reads its nonce from (the number is no secret)."""
RC_FD = 3
"""The descriptor a program given an rc text (`release`) finds it on: a sealed memfd, so that nothing, not even
a program of the same user (or root), can change what the shell reads before its nonce (`/dev/fd/3`)."""
RC_FD_VAR = "LOOKOUT_RC_FD"
"""The variable that names RC_FD to the shell, which closes it once read."""
STOP_LADDER = ((signal.SIGHUP, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0))
"""Each signal of the stop ladder, and how long the program has after it before the next one."""
READ_BYTES = 256 << 10
"""Most bytes read from the PTY at once, before they go to the journal."""
_BUFFER = bytearray(64 << 10)
"""Every read of the PTY lands here first: one buffer made before the fork, instead of a new 64 KB one for each
read (a holder's heap would keep that much dirty for good)."""


def set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def read_batch(fd: int, limit: int = READ_BYTES) -> tuple[bytes, bool]:
    """What `fd` holds now, up to about `limit` bytes, and whether the other side has hung up (EOF, or EIO:
    every holder of the slave side has closed it)."""
    chunks: list[bytes] = []
    total = 0
    view = memoryview(_BUFFER)
    while total < limit:
        try:
            n = os.readv(fd, [view])
        except BlockingIOError:
            return b"".join(chunks), False
        except OSError:
            return b"".join(chunks), True
        if not n:
            return b"".join(chunks), True
        chunks.append(bytes(view[:n]))
        total += n
    return b"".join(chunks), False


@dataclass(frozen=True, slots=True)
class Ahead:
    """A terminal's PTY and its program's process, made before the program is known (`fork_ahead`)."""

    master: int
    pid: int
    """The process that becomes the program once released (`release`): the leader of a session of its own,
    with the PTY's slave as its controlling terminal and its 0, 1 and 2."""
    release_fd: int
    reaper: bool
    """Whether the process that made it is the program's child subreaper (`become_subreaper`)."""


def fork_ahead() -> Ahead:
    """A new PTY, and a child process made ready to become the program that will run on it, waiting for it.

    So, once the program is known, it takes one write to start it, and its pid is known at once: nobody waits
    for a fork or an exec (on a busy machine a new process waits for a processor before it can exec). The
    child (forked: no thread runs here) starts a session of its own and opens the PTY's slave by its name,
    which makes it the session's controlling terminal; every signal goes back to its default (ignored signals
    stay ignored across exec: Python ignores SIGPIPE and SIGXFSZ, and a holder SIGINT and SIGHUP) and none is
    blocked; only the terminal goes with the program (and the shell integration's nonce, on a pipe of its
    own). It ends without a word when this process ends without releasing it.

    Returns once the child has the slave open (until then, a read of the master fails as if the program had
    hung up, EIO, and a holder would stop reading it) and has closed every descriptor of this process it
    had (so that none of them outlives this process in it)."""
    reaper = become_subreaper()
    master, slave = os.openpty()
    try:
        name = os.ttyname(slave)
    finally:
        os.close(slave)
    release_r, release_w = os.pipe2(os.O_CLOEXEC)
    ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        _wait_then_become(name, release_r, ready_w)
    os.close(release_r)
    os.close(ready_w)
    try:
        if os.read(ready_r, 1) != b"r":
            raise ChildProcessError("the program's process ended before it had its terminal")
    finally:
        os.close(ready_r)
    return Ahead(master, pid, release_w, reaper)


def check_program(spec: dict[str, Any]) -> None:
    """ValueError unless the program of `spec` (argv, cwd, env, nonce, rc) is of the types exec takes."""
    argv, env = spec["argv"], spec["env"]
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        raise ValueError("argv is a list of strings")
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        raise ValueError("env maps strings to strings")
    if not isinstance(spec["cwd"], str) or not all(isinstance(spec.get(k), str | None) for k in ("nonce", "rc")):
        raise ValueError("cwd, nonce and rc are strings")


def release(ahead: Ahead, spec: dict[str, Any]) -> None:
    """Have the process `ahead` run the program of `spec` (`check_program`: its argv in its cwd, with its env,
    its nonce on a pipe and its rc text on RC_FD) at once: it is not waited for. A program that cannot be run
    says why on its terminal and exits 127 (not found) or 126 (any other failure), as a shell's does."""
    program = json.dumps({k: spec.get(k) for k in ("argv", "cwd", "env", "nonce", "rc")}).encode()
    try:
        if len(program) > _PIPE_BYTES:  # the whole program is written before the child reads it
            fcntl.fcntl(ahead.release_fd, fcntl.F_SETPIPE_SZ, len(program))
        view = memoryview(program)
        while view:
            view = view[os.write(ahead.release_fd, view) :]
    finally:
        os.close(ahead.release_fd)


_PIPE_BYTES = 64 << 10


def _wait_then_become(slave: str, release_fd: int, ready_fd: int) -> NoReturn:
    """In the child `fork_ahead` made: get ready, wait for the program, become it (or say why not and exit)."""
    name = None
    try:
        os.setsid()
        terminal = os.open(slave, os.O_RDWR)  # the new session's controlling terminal
        for fd in (0, 1, 2):
            os.dup2(terminal, fd)
        close_all_but({0, 1, 2, release_fd, ready_fd})
        os.write(ready_fd, b"r")
        os.close(ready_fd)
        for sig in _DEFAULTED:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        chunks = []
        while chunk := os.read(release_fd, _PIPE_BYTES):
            chunks.append(chunk)
        if not chunks:  # never released
            os._exit(0)
        os.close(release_fd)
        program = json.loads(b"".join(chunks))
        argv, env, name = program["argv"], program["env"], repr(program["argv"][0])
        if program["rc"] is not None:
            _sealed_at(RC_FD, program["rc"])
            env = {**env, RC_FD_VAR: str(RC_FD)}
        if program["nonce"]:
            nonce_fd = _pipe_holding(program["nonce"] + "\n")
            os.set_inheritable(nonce_fd, True)
            env = {**env, NONCE_FD: str(nonce_fd)}
        os.chdir(program["cwd"])
        os.execvpe(argv[0], argv, env)
    except BaseException as exc:  # noqa: BLE001 (a forked child never returns into the holder)
        try:
            if name is not None:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else repr(exc)
                os.write(2, f"lookout: cannot run {name}: {why}\r\n".encode(errors="replace"))
        finally:
            os._exit(127 if isinstance(exc, FileNotFoundError) else 126)
    os._exit(126)  # (execvpe returns only by raising)


_DEFAULTED = frozenset(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}


def close_all_but(keep: set[int]) -> None:
    """Close every descriptor of this process but `keep`."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _sealed_at(fd: int, text: str) -> None:
    """Put at descriptor `fd` (inherited across exec) a memfd that holds `text` and is sealed: neither it nor
    its size can change again, through any descriptor or /proc path, whoever asks."""
    memfd = os.memfd_create("lookout-rc", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(text.encode())
    while view:
        view = view[os.write(memfd, view) :]
    seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
    fcntl.fcntl(memfd, fcntl.F_ADD_SEALS, seals)
    if memfd != fd:
        os.dup2(memfd, fd)
        os.close(memfd)
    os.set_inheritable(fd, True)


def _pipe_holding(text: str) -> int:
    """The read end of a pipe that holds `text` (far less than a pipe's buffer) and has no writer left."""
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    try:
        os.write(write_fd, text.encode())
    finally:
        os.close(write_fd)
    return read_fd


def session_members(sid: int) -> list[int]:
    """The processes whose session is `sid` (from /proc; a process that just exited is skipped)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            members.append(int(entry.name))
    return members


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the child subreaper of what it forks (prctl): a process of its program's session
    whose parent ends is re-parented here, not to init, so every member of the session stays among this
    process's descendants (`descendants`), which the stop ladder then reads instead of all of /proc (2,500
    processes took 180 ms of a loaded machine per scan). Whether it could (ctypes is loaded by the fork server,
    in pages every holder shares)."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(pid: int) -> list[int] | None:
    """Every process below `pid` (its children, theirs...), from /proc/<pid>/task/<tid>/children; None where
    the kernel has no such file (CONFIG_PROC_CHILDREN)."""
    below = children(pid)
    if below is None:
        return None
    found, todo = list(below), list(below)
    while todo:
        more = children(todo.pop()) or []
        found += more
        todo += more
    return found


def children(pid: int) -> list[int] | None:
    """The children of `pid` (of each of its threads); [] when it is gone, None without the children files."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            fd = os.open(f"/proc/{pid}/task/{task}/children", os.O_RDONLY)
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{task}"):
                continue
            return None
        except OSError:
            continue
        try:
            found += [int(c) for c in os.read(fd, 1 << 16).split()]
        except OSError:
            pass
        finally:
            os.close(fd)
    return found


def _sid(pid: int) -> int | None:
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        return int(os.read(fd, 1024).rsplit(b")", 1)[1].split()[3])
    except (OSError, ValueError, IndexError):
        return None
    finally:
        os.close(fd)


def signal_session(leader: int, sig: int, reaper: int | None = None) -> None:
    """Send `sig` to every process of the program's session (`leader` is its id): the foreground job,
    background jobs in process groups of their own, and the leader. `reaper`: a child subreaper above the
    leader (its holder, `become_subreaper`): the session's members are then among its descendants, so only
    those are read, not all of /proc."""
    below = descendants(reaper) if reaper is not None else None
    members = session_members(leader) if below is None else [p for p in below if _sid(p) == leader]
    for pid in {*members, leader}:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
