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


class TakenOver(Conflict):
    """The terminal was let go to the daemon that replaced this one (a hot restart) before the request touched
    it: the request is passed on to that daemon (lookout.api.handover), which answers it."""


class Gone(LookoutError):
    """What was asked for existed and its record is gone (a purged terminal, a closed page's observations)."""

    status = 410
    code = "gone"


class TooLarge(LookoutError):
    status = 413
    code = "too_large"


class Unavailable(LookoutError):
    """A backend lookout needs (the adb server, the browser) cannot be reached."""

    status = 503
    code = "unavailable"


class BackendTimeout(LookoutError):
    """A backend did not answer in time (a device capture, a UI dump)."""

    status = 504
    code = "timeout"


class BackendFailure(LookoutError):
    """A backend answered with a failure lookout cannot turn into a result (a UI dump that keeps failing)."""

    status = 502
    code = "backend_failure"
