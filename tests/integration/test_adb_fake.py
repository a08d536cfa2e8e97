"""The test device itself: unmodified adbutils through a real adb server reaches the fake as a device."""
from __future__ import annotations

import io
import socket
import subprocess
import tempfile
from pathlib import Path

import adbutils
from PIL import Image

from tests.support.adb_fake import FakeDevice
from tests.support.adb_server import AdbServer


def _client(server: AdbServer) -> adbutils.AdbClient:
    return adbutils.AdbClient(host=server.host, port=server.port)


def test_shell_v1_and_v2_sync_and_stubs(adb_server: AdbServer, make_device) -> None:  # type: ignore[no-untyped-def]
    fake, serial = make_device(model="Bench Phone", size=(1440, 3120))
    device = _client(adb_server).device(serial)
    assert device.shell("getprop ro.product.model") == "Bench Phone"
    result = device.shell2("echo out; echo err >&2; exit 3", v2=True)
    assert (result.stdout, result.stderr, result.returncode) == ("out\n", "err\n", 3)
    assert device.shell("echo a; echo b >&2") == "a\nb"  # v1 mixes stderr into stdout, as devices do
    assert tuple(device.window_size()) == (1440, 3120) and device.rotation() == 0
    fake.fault("multi_display_warning", True)
    assert device.shell("screencap -p", encoding=None).startswith(b"[Warning] Multiple displays")
    png = device.shell2("screencap -p", encoding=None, v2=True).stdout
    assert png.startswith(b"\x89PNG") and Image.open(io.BytesIO(png)).size == (1440, 3120)
    raw = device.shell2("screencap", encoding=None, v2=True).stdout
    assert len(raw) == 16 + 1440 * 3120 * 4 and raw[:8] == (1440).to_bytes(4, "little") + (3120).to_bytes(4, "little")
    device.sync.push(b"pushed bytes", "/data/local/tmp/x.bin")
    assert device.sync.read_bytes("/data/local/tmp/x.bin") == b"pushed bytes"
    device.shell("input text 'it'\\''s%sok'; input tap 1 2")
    assert fake.inputs() == [["text", "it's%sok"], ["tap", "1", "2"]]


def test_states_and_two_devices(adb_server: AdbServer, make_device) -> None:  # type: ignore[no-untyped-def]
    _, small = make_device(size=(1080, 2400))
    _, big = make_device(size=(1440, 3120))
    _, locked = make_device(mode="unauthorized")
    _, dead = make_device(mode="offline")
    assert adb_server.devices() == {small: "device", big: "device", locked: "unauthorized", dead: "offline"}
    sizes = {s: tuple(_client(adb_server).device(s).window_size()) for s in (small, big)}
    assert sizes == {small: (1080, 2400), big: (1440, 3120)}


def test_a_stopped_server_leaves_nothing_running() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = AdbServer(Path(tmp)).start()
        with FakeDevice(Path(tmp) / "dev") as fake:
            server.connect(fake)
        pid = server.proc.pid if server.proc else -1
        server.stop()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", server.port)) != 0
    assert subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode != 0
