"""pytest fixtures: a real adb server per test, and a factory of fake devices connected to it."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.adb_fake import FakeDevice
from tests.support.adb_server import AdbServer


@pytest.fixture
def adb_server(tmp_path: Path) -> Iterator[AdbServer]:
    server = AdbServer(tmp_path / "adb-home").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def make_device(tmp_path: Path, adb_server: AdbServer) -> Iterator[Callable[..., tuple[FakeDevice, str]]]:
    """make_device(model=, size=, mode=) -> (fake, serial), connected to `adb_server`."""
    fakes: list[FakeDevice] = []

    def make(**options: Any) -> tuple[FakeDevice, str]:
        fake = FakeDevice(tmp_path / f"device-{len(fakes)}", **options)
        fakes.append(fake)
        fake.start()
        return fake, adb_server.connect(fake)

    yield make
    for fake in fakes:
        fake.stop()
