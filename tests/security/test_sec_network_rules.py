"""The pure rules behind the network guards: which Host and Origin pass, how the log is masked, and how
wrong tokens are slowed (with a fake clock)."""
from __future__ import annotations

import asyncio
import logging
import sys

import pytest

from lookout.api.auth_throttle import AuthThrottle
from lookout.api.hosts import host_allowed, normalized_hosts, origin_allowed
from lookout.core.redaction import RedactSecrets, Scrubber

ALLOWED = normalized_hosts(["Lookout.Test.", " 10.1.2.3 ", "[fd00::1]", ""])


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8765", "127.9.9.9:1", "localhost", "LOCALHOST:8765",
                                  "localhost.", "[::1]:8765", "::1", "lookout.test:80", "LOOKOUT.TEST",
                                  "10.1.2.3:8765", "[fd00::1]:8765"])  # fmt: skip
def test_loopback_and_listed_hosts_pass(host: str) -> None:
    assert host_allowed(host, ALLOWED)


@pytest.mark.parametrize("host", [None, "", "evil.example", "evil.example:8765", "127.0.0.1.evil.example",
                                  "localhost.evil.example", "lookout.test.evil.example", "0.0.0.0:8765",
                                  "192.168.1.5", "2130706433", "[::ffff:8.8.8.8]", "[::1", "sub.lookout.test"])  # fmt: skip
def test_other_hosts_are_refused(host: str | None) -> None:
    assert not host_allowed(host, ALLOWED)


def test_origin_must_be_the_requests_own() -> None:
    assert origin_allowed(None, "127.0.0.1:8765")
    assert origin_allowed("http://127.0.0.1:8765", "127.0.0.1:8765")
    assert origin_allowed("HTTPS://Localhost:8765", "localhost:8765")
    for origin in ("null", "http://evil.example", "http://127.0.0.1:8766", "file://", "chrome-extension://x",
                   "http://127.0.0.1"):  # fmt: skip
        assert not origin_allowed(origin, "127.0.0.1:8765"), origin


def _record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.error", logging.INFO, __file__, 1, msg, args, None)


def test_the_log_masks_the_token_and_token_parameters() -> None:
    redact = RedactSecrets(Scrubber(["the-real-token-123456"]))
    record = _record('%s - "WebSocket %s" [accepted]', "127.0.0.1:5", "/v1/events?agent=a&token=guess&mode=raw")
    assert redact.filter(record)
    assert record.getMessage() == '127.0.0.1:5 - "WebSocket /v1/events?agent=a&token=[redacted]&mode=raw" [accepted]'
    record = _record("path /x/the-real-token-123456 and lookout.bearer.dGhlLXJlYWw")
    redact.filter(record)
    assert record.getMessage() == "path /x/[redacted] and lookout.bearer.[redacted]"
    try:
        raise ValueError("boom the-real-token-123456")
    except ValueError:
        failing = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    redact.filter(failing)
    text = logging.Formatter().format(failing)
    assert "boom [redacted]" in text and "the-real-token" not in text
    untouched = _record("%d tokens", 5)
    redact.filter(untouched)
    assert untouched.args == (5,), "records without secrets keep their arguments"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_throttle_slows_after_free_failures_doubling_to_the_cap() -> None:
    clock = Clock()
    throttle = AuthThrottle(free=3, base=0.5, cap=4.0, clock=clock)
    delays = []
    for _ in range(8):
        throttle.failed("a")
        delays.append(throttle.delay("a"))
    assert delays == [0, 0, 0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert throttle.retry_after("a") == 4 and throttle.delay("b") == 0 and throttle.retry_after("b") is None
    throttle.succeeded("a")
    assert throttle.delay("a") == 0
    for _ in range(5):
        throttle.failed("a")
    clock.now += 301
    assert throttle.delay("a") == 0, "forgotten after forget_s without a failure"


async def test_throttle_queues_parallel_attempts_and_refuses_far_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    throttle = AuthThrottle(free=1, base=10.0, cap=10.0, max_wait=25.0, clock=clock)
    throttle.failed("a")
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    turns = await asyncio.gather(*(throttle.wait_turn("a") for _ in range(3)))
    assert turns == [True, True, False] and slept == [10.0, 20.0], "each waits after the one before it"


def test_throttle_remembers_a_bounded_number_of_clients() -> None:
    throttle = AuthThrottle(free=1, max_clients=3)
    for client in "abcd":
        throttle.failed(client)
    assert throttle.delay("a") == 0 and all(throttle.delay(c) > 0 for c in "bcd")
