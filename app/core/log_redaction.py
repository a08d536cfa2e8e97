"""Keeping secrets out of the log: a filter on every handler that masks the API token wherever it appears,
and the value of any `token=` query parameter (uvicorn logs each WebSocket upgrade with its query string)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

REDACTED = "[redacted]"
SECRET_PATTERNS = (
    re.compile(r"(?i)(token=)[^&\s\"']+"),
    re.compile(r"(lookout\.bearer\.)[A-Za-z0-9_\-]+"),
)


class RedactSecrets(logging.Filter):
    """Rewrites a record's message (and its traceback text) with the secrets masked."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for pattern in SECRET_PATTERNS:
            text = pattern.sub(rf"\g<1>{REDACTED}", text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self.redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


def redact_all_handlers(secrets: Iterable[str]) -> RedactSecrets:
    """Put one RedactSecrets on every handler configured so far (the root's and every named logger's)."""
    redaction = RedactSecrets(secrets)
    named = logging.Logger.manager.loggerDict.values()
    loggers = [logging.getLogger(), *(v for v in named if isinstance(v, logging.Logger))]
    for handler in {h for logger in loggers for h in logger.handlers}:
        handler.addFilter(redaction)
    return redaction
