"""The API token: given in the settings, or generated once into the data directory with mode 0600."""
from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from app.core.private_files import check_token_file, open_file


def token_path(data_dir: Path) -> Path:
    return data_dir / "token"


def load_or_create_token(data_dir: Path, configured: str | None) -> str:
    """The configured token if any, else the one stored in `<data_dir>/token` (refused as UnsafePath when
    the file is a link, someone else's, or open to others), created when missing. `data_dir` has passed
    `check_data_dir`."""
    if configured:
        return configured
    path = token_path(data_dir)
    existing = read_token(path)
    if existing:
        return existing
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


def token_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison."""
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())
