"""Identifiers: short random ids, and the check that keeps an id from escaping its directory."""

from __future__ import annotations

import re
import secrets

from lookout.core.errors import NotFound

SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def new_id(prefix: str) -> str:
    """`<prefix>_` and 10 random hex digits, e.g. `t_3f9a2c1b7e`."""
    return f"{prefix}_{secrets.token_hex(5)}"


def check_id(value: str, kind: str) -> str:
    """Return `value` if it is safe to use as a file name, else raise NotFound (it cannot exist)."""
    if not SAFE_ID.fullmatch(value) or ".." in value:
        raise NotFound(f"no {kind} {value!r}")
    return value
