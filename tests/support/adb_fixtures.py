"""pytest fixtures: a real adb server per test, and a factory of fake devices connected to it.

Registered in tests/conftest.py with `pytest_plugins = ["tests.support.adb_fixtures"]`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.adb_fake import FakeDevice
from tests.support.adb_server import AdbServer

MakeDevice = Callable[..., tuple[FakeDevice, str]]
"""make_device(*, model="Pixel 7", size=(1080, 2400), mode="device") -> (fake, serial)"""


@pytest.fixture
def adb_server(tmp_path: Path) -> Iterator[AdbServer]:
    """A real adb server on a free port (starts in well under a second); stopped and gone after the test."""
    server = AdbServer(tmp_path / "adb-home").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def make_device(tmp_path: Path, adb_server: AdbServer) -> Iterator[MakeDevice]:
    """A factory: make_device(model=, size=, mode=) -> (fake, serial), the fake connected to `adb_server`
    and listed in its mode. Its screen starts as colour bands of its size. Every fake stops after the test."""
    fakes: list[FakeDevice] = []

    def make(*, model: str = "Pixel 7", size: tuple[int, int] = (1080, 2400), mode: str = "device") -> tuple[
            FakeDevice, str]:  # fmt: skip
        fake = FakeDevice(tmp_path / f"device-{len(fakes)}", model=model, size=size, mode=mode)
        fakes.append(fake)
        return fake, adb_server.connect(fake)

    try:
        yield make
    finally:
        for fake in fakes:
            fake.stop()


@pytest.fixture
def fake_device(make_device: MakeDevice) -> MakeDevice:
    """The same factory as `make_device`, under the other name."""
    return make_device
