"""The API token: given in the settings, or generated once into the data directory with mode 0600."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from lookout.core.private_files import check_token_file, open_file

MIN_LENGTH = 16


CONFIGURED = "LOOKOUT_TOKEN (or --token)"
"""Where a configured token comes from, as messages name it."""


class WeakToken(ValueError):
    """A token too short to resist guessing."""


def token_path(data_dir: Path) -> Path:
    return data_dir / "token"


def load_or_create_token(data_dir: Path, configured: str | None) -> str:
    """The configured token if any, else the one stored in `<data_dir>/token` (refused as UnsafePath when
    the file is a link, someone else's, or open to others), created when missing. `data_dir` has passed
    `check_data_dir`. Raises WeakToken when the one found is shorter than MIN_LENGTH characters."""
    if configured:
        return strong(configured, CONFIGURED)
    path = token_path(data_dir)
    existing = read_token(path)
    if existing:
        return strong(existing, f"the token file {path}")
    if existing is not None:
        os.unlink(path)  # an empty token file (a crash between create and write) is made again
    token = secrets.token_urlsafe(32)
    with open(open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as f:
        f.write((token + "\n").encode())
    return token


def read_token(path: Path) -> str | None:
    """The token in the token file at `path` ("" when empty, None when missing), read without following a
    link; UnsafePath when the file is someone else's or open to others."""
    try:
        fd = open_file(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with open(fd, "rb") as f:
        check_token_file(path, fd)
        return f.read().decode(errors="replace").strip()


def strong(token: str, source: str) -> str:
    """`token`, unless it is too short (WeakToken, naming `source`)."""
    if len(token) < MIN_LENGTH:
        raise WeakToken(f"{source} holds a token of {len(token)} characters; it must be at least {MIN_LENGTH} characters "
                        "(e.g. `openssl rand -hex 32`)")  # fmt: skip
    return token


def token_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison."""
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())
