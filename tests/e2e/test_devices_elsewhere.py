"""Devices on an adb server elsewhere (issue: browsers and devices elsewhere): the daemon uses an adb server on
another address and a non-default port (`adb -a`, as on another host or through a tunnel), and a device that
disappears in the middle of a call is an answer that says so, never a hang or a 500."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx

from tests.conftest import Daemon
from tests.support.adb_fake import FakeDevice
from tests.support.adb_server import AdbServer
from tests.support.polling import eventually


def _other_address() -> str:
    """This machine's address on its network (not loopback), else another loopback address than 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: only the route is looked up
            address = str(probe.getsockname()[0])
        except OSError:
            address = ""
    return address if address and not address.startswith("127.") else "127.0.0.2"


def test_devices_through_an_adb_server_on_another_address_and_port(tmp_path: Path) -> None:
    address = _other_address()
    server = AdbServer(tmp_path / "adb", listen_all=True).start()
    fake = FakeDevice(tmp_path / "device")
    try:
        serial = server.connect(fake)
        d = Daemon(tmp_path / "data", LOOKOUT_ADB_HOST=address, LOOKOUT_ADB_PORT=str(server.port)).start()
        try:
            with d.client(timeout=60) as api:
                assert [dev["serial"] for dev in api.get("/v1/devices").json()["devices"]] == [serial]
                assert api.post(f"/v1/devices/{serial}/screenshot", json={}).status_code == 200
                assert api.post(f"/v1/devices/{serial}/tap", json={"x": 10, "y": 10}).status_code == 200

                fake.fault("screencap_delay", 3)
                answers: list[httpx.Response] = []
                call = threading.Thread(target=lambda: answers.append(
                    api.post(f"/v1/devices/{serial}/screenshot", json={})))  # fmt: skip
                call.start()
                eventually(fake.delayed_captures, what="the capture to be under way")
                server.disconnect(serial)  # the device goes away in the middle of its capture
                fake.stop()
                call.join(60)
                assert len(answers) == 1, "the call ended"
                gone = answers[0]
                assert gone.status_code in (409, 503), gone.text
                assert serial in gone.json()["error"]["message"], gone.text
                after = api.post(f"/v1/devices/{serial}/tap", json={"x": 10, "y": 10})
                assert after.status_code in (404, 409, 503) and serial in after.json()["error"]["message"], after.text
        finally:
            d.finish()
    finally:
        fake.stop()
        server.stop()
