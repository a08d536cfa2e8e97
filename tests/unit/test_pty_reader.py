"""The PTY reading thread on real PTYs: batches reach the loop in order, reading pauses while too much
waits for the loop, hang-ups are seen, and a stopped feed is never read again."""
from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator

import pytest

from app.terminal.pty_reader import BATCH_BYTES, MAX_PENDING, Feed, PtyReader, read_batch


@pytest.fixture
def pty() -> Iterator[tuple[int, int]]:
    master, slave = os.openpty()
    os.set_blocking(master, False)
    yield master, slave
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


@pytest.fixture
async def reader() -> AsyncIterator[PtyReader]:
    watcher = PtyReader()
    yield watcher
    await asyncio.to_thread(watcher.close)


async def _ready_once(reader: PtyReader, fd: int) -> tuple[Feed, asyncio.Queue[None]]:
    calls: asyncio.Queue[None] = asyncio.Queue()
    feed = reader.add(fd, lambda: calls.put_nowait(None))
    return feed, calls


async def test_a_batch_reaches_the_loop(pty: tuple[int, int], reader: PtyReader) -> None:
    master, slave = pty
    feed, calls = await _ready_once(reader, master)
    os.write(slave, b"first\n")
    await asyncio.wait_for(calls.get(), 10)
    assert feed.take() == (b"first\r\n", False)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def test_reading_pauses_while_too_much_waits_for_the_loop(pty: tuple[int, int], reader: PtyReader) -> None:
    master, slave = pty
    feed, calls = await _ready_once(reader, master)
    total = 3 * MAX_PENDING
    writer = asyncio.create_task(asyncio.to_thread(_write_all, slave, b"x" * total))
    await asyncio.wait_for(calls.get(), 10)
    await asyncio.sleep(0.5)
    assert not writer.done(), "the program waits in its write"
    data, _ = feed.take()
    assert MAX_PENDING <= len(data) < MAX_PENDING + BATCH_BYTES
    received = len(data)
    while received < total:
        feed.resume()
        await asyncio.wait_for(calls.get(), 10)
        received += len(feed.take()[0])
    await writer
    assert received == total


async def test_many_batches_arrive_whole_and_in_order(pty: tuple[int, int], reader: PtyReader) -> None:
    master, slave = pty
    feed, calls = await _ready_once(reader, master)
    lines = b"".join(b"line %d\n" % i for i in range(3000))
    writer = asyncio.create_task(asyncio.to_thread(os.write, slave, lines))
    seen = b""
    while b"line 2999" not in seen:
        await asyncio.wait_for(calls.get(), 10)
        seen += feed.take()[0]
        feed.resume()
    await writer
    assert seen.replace(b"\r\n", b"\n") == lines


async def test_a_hang_up_is_reported(pty: tuple[int, int], reader: PtyReader) -> None:
    master, slave = pty
    feed, calls = await _ready_once(reader, master)
    os.write(slave, b"last words\n")
    os.close(slave)
    data = b""
    while True:
        await asyncio.wait_for(calls.get(), 10)
        chunk, hangup = feed.take()
        data += chunk
        if hangup:
            break
        feed.resume()
    assert b"last words" in data


async def test_a_stopped_feed_is_not_read(pty: tuple[int, int], reader: PtyReader) -> None:
    master, slave = pty
    feed, calls = await _ready_once(reader, master)
    feed.stop()
    os.write(slave, b"unread\n")
    await asyncio.sleep(0.3)
    assert calls.empty() and feed.take() == (b"", False)
    assert read_batch(master) == (b"unread\r\n", False), "what was left stays in the PTY for a final drain"
    feed.resume()  # a late resume of a stopped feed is ignored


async def test_one_failing_descriptor_does_not_stop_the_others(
    pty: tuple[int, int], reader: PtyReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken_master, broken_slave = pty
    master, slave = os.openpty()
    try:
        os.set_blocking(master, False)

        def flaky(fd: int) -> tuple[bytes, bool]:
            if fd == broken_master:
                raise ValueError("a bad day")
            return read_batch(fd)

        monkeypatch.setattr("app.terminal.pty_reader.read_batch", flaky)
        _, broken_calls = await _ready_once(reader, broken_master)
        feed, calls = await _ready_once(reader, master)
        os.write(broken_slave, b"lost\n")
        await asyncio.sleep(0.2)
        os.write(slave, b"still read\n")
        await asyncio.wait_for(calls.get(), 10)
        assert feed.take() == (b"still read\r\n", False) and broken_calls.empty()
    finally:
        os.close(master)
        os.close(slave)


async def test_a_wake_up_with_nothing_to_read_keeps_watching(
    pty: tuple[int, int], reader: PtyReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, slave = pty
    spurious = [True]

    def once_empty(fd: int) -> tuple[bytes, bool]:
        if spurious.pop() if spurious else False:
            return b"", False
        return read_batch(fd)

    monkeypatch.setattr("app.terminal.pty_reader.read_batch", once_empty)
    feed, calls = await _ready_once(reader, master)
    os.write(slave, b"late\n")
    await asyncio.wait_for(calls.get(), 10)
    assert feed.take() == (b"late\r\n", False) and not spurious
