"""Random bytes into both screen engines and through a real terminal: no exception escapes, nothing hangs,
and the screen works afterwards.

`LOOKOUT_SOAK_FUZZ_MB` sets how many MB each engine gets (4 by default; `make soak` feeds 100).
"""
from __future__ import annotations

import os
import random

import httpx
import pytest

from lookout.terminal.screen.engines import ENGINE_NAMES, create_engine

MEGABYTES = int(os.environ.get("LOOKOUT_SOAK_FUZZ_MB", "4"))
# random bytes with the characters that steer a terminal made more likely than chance would
STEERING = b"\x1b[];?0123456789;:mHJKhlrPcq\x07\x9b\x90\x9c\r\n\x08\t\x0e\x0f\xc2\xe2\x80\xf0"


def chunks(seed: int, total: int) -> list[bytes]:
    rng = random.Random(seed)
    out, size = [], 0
    while size < total:
        n = rng.choice((1, 7, 64, 512, 4096, 65536))
        piece = bytes(rng.choice(STEERING) if rng.random() < 0.4 else rng.randrange(256) for _ in range(min(n, 4096)))
        piece = (piece * (n // len(piece) + 1))[:n]
        out.append(piece)
        size += n
    return out


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_random_bytes_never_break_an_engine(name: str) -> None:
    engine = create_engine(name, 80, 24, 500)
    for i, piece in enumerate(chunks(seed=len(name), total=MEGABYTES << 20)):
        engine.feed(piece)
        if i % 50 == 0:
            engine.resize(40 + i % 120, 5 + i % 50)
            assert len(engine.text_rows()) == engine.rows
            engine.cursor()
            engine.dump()
    engine.resize(80, 24)
    engine.feed(b"\x1bc\x1b[?1049l\x1b[0m\x1b[H\x1b[2Jstill alive")
    assert engine.text_rows()[0] == "still alive"


def test_a_terminal_that_prints_random_bytes_stays_usable(api: httpx.Client) -> None:
    noise = "head -c 3000000 /dev/urandom; printf '\\033c'; echo; echo done-$((40+2)); exec cat"
    tid = api.post("/v1/terminals", json={"command": ["sh", "-c", noise], "cols": 80, "rows": 24}).json()["id"]
    waited = api.post(f"/v1/terminals/{tid}/wait",
                      json={"until": {"regex": "done-42"}, "since": 0, "timeout_ms": 25000}).json()  # fmt: skip
    assert waited["matched"] is True, waited
    api.post(f"/v1/terminals/{tid}/input", json={"text": "typed-after\r"})
    after = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "typed-after", "on": "screen"}, "timeout_ms": 10000})
    assert after.json()["matched"] is True
    screen = api.get(f"/v1/terminals/{tid}/screen").json()
    assert "done-42" in "\n".join(screen["text"])
