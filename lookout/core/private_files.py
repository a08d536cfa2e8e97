"""The daemon's files are its user's alone, as tmux and ssh keep theirs.

Directories are made 0700 and files 0600 whatever the umask; every file is opened with O_NOFOLLOW, so a
link planted at one of its names is refused (`UnsafePath`), never followed; a directory lookout makes or
reuses must be a real directory, not a link. At start (`check_data_dir`, `check_token_file`):

- a data dir or token file owned by another user is refused: that user could read the records, plant
  links, or set the token;
- one that group or others may write is refused: anyone could have planted files or links in it already;
- a data dir that is a symbolic link is refused (pass the directory itself);
- a token file that group or others may read is refused: the token may have been read (remove the file
  for a new token, or chmod 600 it to keep this one);
- a data dir of ours that group or others may only read or enter (0755 of earlier versions, or made under
  a umask of 022) is tightened to 0700, and the log says so. Files inside it from earlier versions keep
  their 0644: the 0700 directory keeps everyone else out of them.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from lookout.core.errors import Conflict

FILE_MODE = 0o600
DIR_MODE = 0o700
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(Conflict, OSError):
    """A path lookout will not use (a link, someone else's, open to others); the message says what to fix.
    An OSError (ELOOP) too, so code that copes with a file it cannot open copes with this one."""

    code = "unsafe_path"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.errno, self.strerror = errno.ELOOP, message

    def __str__(self) -> str:
        return self.message


def open_file(path: Path | str, flags: int) -> int:
    """`os.open` that never follows a link at `path` and creates files 0600; a link there is UnsafePath."""
    try:
        return os.open(path, flags | _NOFOLLOW, FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _linked(path) from None
        raise


def read_bytes(path: Path | str, limit: int | None = None) -> bytes:
    """The whole file, read without following a link at `path`; ValueError when it is larger than `limit`
    (nothing more than `limit` + 1 bytes is read)."""
    with open(open_file(path, os.O_RDONLY), "rb") as f:
        if limit is None:
            return f.read()
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} is larger than {limit} bytes: not read")
    return data


def make_dir(path: Path) -> None:
    """`path` as a 0700 directory, with its missing parents (each 0700). An existing one must be a real
    directory, not a link; one left open to others by an earlier version is tightened to 0700."""
    try:
        os.mkdir(path, DIR_MODE)
        return
    except FileNotFoundError:
        make_dir(path.parent)
        make_dir(path)
        return
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise _linked(path) if stat.S_ISLNK(info.st_mode) else UnsafePath(f"{path} is not a directory: move it away")
    if info.st_mode & 0o077:
        os.chmod(path, DIR_MODE)


def check_data_dir(path: Path) -> str | None:
    """Create the data dir 0700 when missing, refuse it when it is not safe (UnsafePath), tighten it to 0700
    when group or others may only read it. Returns what was tightened, for the log, else None."""
    if not path.exists() and not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True)  # the parents are the user's, not lookout's
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:  # made meanwhile by someone else: checked below like any existing one
            pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"data dir {path} is a symbolic link; pass the directory itself "
                         f"(--data-dir {os.path.realpath(path)}) after checking it is yours")  # fmt: skip
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePath(f"data dir {path} is not a directory")
    _check_owner_and_writers(path, info, "data dir", owner_fix="use a data dir of your own (--data-dir), or chown "
                             "it to yourself after checking its content", writers_fix=f"chmod 700 {path}")  # fmt: skip
    loose = stat.S_IMODE(info.st_mode) & 0o077
    if not loose:
        return None
    os.chmod(path, DIR_MODE)
    return f"data dir {path} was mode {stat.S_IMODE(info.st_mode):04o}, open to others; tightened to 0700"


def check_token_file(path: Path, fd: int) -> None:
    """Refuse a token file (opened as `fd`) that someone else owns or that others may read or write."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"token file {path} is not a regular file: remove it")
    _check_owner_and_writers(path, info, "token file", owner_fix=f"remove it (rm {path}) for a new token",
                             writers_fix=f"rm {path} for a new token")  # fmt: skip
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise UnsafePath(f"token file {path} is mode {stat.S_IMODE(info.st_mode):04o}: others may have read the "
                         f"token; remove it (rm {path}) for a new one, or chmod 600 {path} to keep it")  # fmt: skip


def _check_owner_and_writers(path: Path, info: os.stat_result, what: str, owner_fix: str, writers_fix: str) -> None:
    uid = os.geteuid()
    if info.st_uid != uid:
        raise UnsafePath(f"{what} {path} is owned by uid {info.st_uid}, not by uid {uid} who runs lookout: "
                         f"{owner_fix}")  # fmt: skip
    if info.st_mode & 0o022:
        raise UnsafePath(f"{what} {path} is mode {stat.S_IMODE(info.st_mode):04o}, writable by others who may "
                         f"have planted files or links in it or changed it; check it, then {writers_fix}")  # fmt: skip


def _linked(path: Path | str) -> UnsafePath:
    return UnsafePath(f"{path} is a symbolic link; lookout does not follow links in its data dir: remove it")
