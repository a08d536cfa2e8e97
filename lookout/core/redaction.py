"""Keeping secrets out of everything that leaves lookout: answers (error messages above all, whatever text
they quote, Playwright's own included), the timeline and the log.

One function does it, `Scrubber.scrub`: it masks the secrets it was given (the API token, and the secret
parts of the addresses lookout was configured with: a remote browser's password and query values, the
summariser's key) wherever they appear, and in any text, whatever it names, the user and password of a URL
(`ws://user:pass@host` becomes `ws://[redacted]@host`), the value of a `token=` parameter and the token of
a `lookout.bearer.` WebSocket subprotocol.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

REDACTED = "[redacted]"
SECRET_PATTERNS = (
    (re.compile(r"(?i)(token=)[^&\s\"']+"), rf"\g<1>{REDACTED}"),
    (re.compile(r"(lookout\.bearer\.)[A-Za-z0-9_\-]+"), rf"\g<1>{REDACTED}"),
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://)[^/?#\s@\"'<>]+@"), rf"\g<1>{REDACTED}@"),
)
"""Secret-shaped text, masked in any text: a `token=` value, a bearer subprotocol's token, a URL's user and
password."""
MIN_SECRET_CHARS = 4
"""Shorter values are not masked one by one (they would mask common words); a URL's user and password are
masked by the pattern in any case."""


def url_secrets(url: str | None) -> list[str]:
    """The secret parts of an address: its user information, password (or user, when it has no password),
    query string and each query value, as written and percent-decoded."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        password, user = parts.password, parts.username
    except ValueError:  # not a URL: the whole of it is the secret
        return [url]
    found = [parts.netloc.rpartition("@")[0] if "@" in parts.netloc else "", parts.query]
    found += [password or "", "" if password else user or ""]
    found += [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    found += [unquote(value) for value in found]
    return list(dict.fromkeys(value for value in found if len(value) >= MIN_SECRET_CHARS))


class Scrubber:
    """Masks known secrets and secret-shaped text (see the module's docstring)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self.secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for pattern, replacement in SECRET_PATTERNS:
            text = pattern.sub(replacement, text)
        return text


class RedactSecrets(logging.Filter):
    """Rewrites a log record's message (and its traceback text) scrubbed."""

    def __init__(self, scrubber: Scrubber) -> None:
        super().__init__()
        self.scrubber = scrubber

    def filter(self, record: logging.LogRecord) -> bool:
        scrub = self.scrubber.scrub
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


def redact_all_handlers(scrubber: Scrubber) -> RedactSecrets:
    """Put one RedactSecrets on every handler configured so far (the root's and every named logger's)."""
    redaction = RedactSecrets(scrubber)
    named = logging.Logger.manager.loggerDict.values()
    loggers = [logging.getLogger(), *(v for v in named if isinstance(v, logging.Logger))]
    for handler in {h for logger in loggers for h in logger.handlers}:
        handler.addFilter(redaction)
    return redaction
