"""The API token: given in the settings, or generated once into the data directory with mode 0600."""
from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path


def token_path(data_dir: Path) -> Path:
    return data_dir / "token"


def load_or_create_token(data_dir: Path, configured: str | None) -> str:
    """The configured token if any, else the one stored in `<data_dir>/token`, created when missing."""
    if configured:
        return configured
    path = token_path(data_dir)
    try:
        existing = path.read_text().strip()
        if existing:
            return existing
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    os.chmod(path, 0o600)
    return token


def token_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison."""
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())
