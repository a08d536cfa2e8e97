"""The API token: given in the settings, or generated once into the data directory with mode 0600."""
from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path


MIN_LENGTH = 16


class WeakToken(ValueError):
    """A token too short to resist guessing."""


def token_path(data_dir: Path) -> Path:
    return data_dir / "token"


def load_or_create_token(data_dir: Path, configured: str | None) -> str:
    """The configured token if any, else the one stored in `<data_dir>/token`, created when missing.
    Raises WeakToken when the one found is shorter than MIN_LENGTH characters."""
    if configured:
        return _strong(configured, "LOOKOUT_TOKEN (or --token)")
    path = token_path(data_dir)
    try:
        existing = path.read_text().strip()
        if existing:
            return _strong(existing, f"the token file {path}")
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


def _strong(token: str, source: str) -> str:
    if len(token) < MIN_LENGTH:
        raise WeakToken(f"{source} holds a token of {len(token)} characters; it must be at least {MIN_LENGTH} characters "
                        "(e.g. `openssl rand -hex 32`)")  # fmt: skip
    return token


def token_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison."""
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())
