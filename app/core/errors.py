"""Domain errors. Each carries a stable code and the HTTP status the API maps it to."""
from __future__ import annotations

from typing import Any


class LookoutError(Exception):
    """Base of every error lookout reports to a client."""

    status = 500
    code = "internal"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class BadInput(LookoutError):
    status = 400
    code = "bad_input"


class NotFound(LookoutError):
    status = 404
    code = "not_found"


class Conflict(LookoutError):
    status = 409
    code = "conflict"


class TooLarge(LookoutError):
    status = 413
    code = "too_large"
