"""The test device itself: unmodified adbutils, through a real adb server, reaches the fake as a device."""
from __future__ import annotations

import io
import socket
import struct
from pathlib import Path

import adbutils
import pytest
from PIL import Image

from tests.support.adb_fake import MULTI_DISPLAY_WARNING, FakeDevice, default_screen
from tests.support.adb_fixtures import MakeDevice
from tests.support.adb_server import AdbServer
from tests.support.polling import eventually


def _device(server: AdbServer, serial: str) -> adbutils.AdbDevice:
    return adbutils.AdbClient(host="127.0.0.1", port=server.port).device(serial)


def _running(marker: str) -> list[int]:
    """Pids of live processes whose command line contains `marker` (read from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_listed_as_a_device_with_its_model_and_features(adb_server: AdbServer, make_device: MakeDevice) -> None:
    _, serial = make_device(model="Bench Phone")
    client = adbutils.AdbClient(host="127.0.0.1", port=adb_server.port)
    assert [(info.serial, info.state) for info in client.list()] == [(serial, "device")]
    device = client.device(serial)
    assert device.shell("getprop ro.product.model") == "Bench Phone"
    assert device.prop.model == "Bench Phone"
    assert device.shell("getprop ro.build.version.sdk") == "34"
    assert device.shell("getprop ro.build.version.release") == "14"
    assert device.shell("getprop persist.sys.nothing") == ""
    assert set(device.get_features().split(",")) == {"shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir"}


def test_shell_v1_merges_stderr_and_v2_keeps_streams_and_exit_code(adb_server: AdbServer,
                                                                   make_device: MakeDevice) -> None:  # fmt: skip
    fake, serial = make_device()
    device = _device(adb_server, serial)
    result = device.shell2("echo out; echo err >&2; exit 3", v2=True)
    assert (result.stdout, result.stderr, result.returncode) == ("out\n", "err\n", 3)
    assert device.shell("echo a; echo b >&2; echo c") == "a\nb\nc"
    assert device.shell("pwd") == str(fake.fs)
    assert adb_server.adb("-s", serial, "exec-out", "printf 'x\\0y'") == "x\0y"


def test_size_rotation_and_override(adb_server: AdbServer, make_device: MakeDevice) -> None:
    fake, serial = make_device(size=(1080, 2400))
    device = _device(adb_server, serial)
    assert device.shell("wm size") == "Physical size: 1080x2400"
    assert (tuple(device.window_size()), device.rotation()) == ((1080, 2400), 0)
    fake.set_rotation(1)
    assert "orientation=1, logicalFrame=Rect(0, 0 - 2400, 1080)" in device.shell("dumpsys display")
    assert (tuple(device.window_size()), device.rotation()) == ((2400, 1080), 1)
    assert device.shell("wm size") == "Physical size: 1080x2400"  # rotation never changes it
    fake.set_rotation(0)
    fake.set_override_size(720, 1600)
    assert device.shell("wm size") == "Physical size: 1080x2400\nOverride size: 720x1600"
    assert tuple(device.window_size()) == (720, 1600)
    fake.set_override_size(None)
    assert tuple(device.window_size()) == (1080, 2400)
    assert device.shell2("dumpsys battery", v2=True).stdout == ""


def test_raw_screencap_has_the_header_and_pixels_of_the_screen(adb_server: AdbServer,
                                                              make_device: MakeDevice) -> None:  # fmt: skip
    _, serial = make_device(size=(1080, 2400))
    raw = _device(adb_server, serial).shell("screencap", encoding=None)
    assert struct.unpack("<4I", raw[:16]) == (1080, 2400, 1, 0)
    assert len(raw) == 16 + 1080 * 2400 * 4
    image = Image.frombytes("RGBA", (1080, 2400), raw[16:]).convert("RGB")
    assert image.tobytes() == default_screen(1080, 2400).tobytes()
    assert image.getextrema() != ((0, 0), (0, 0), (0, 0))  # not black by default


def test_png_screencap_is_the_screen_that_was_set(adb_server: AdbServer, make_device: MakeDevice) -> None:
    fake, serial = make_device(size=(1080, 2400))
    landscape = default_screen(2400, 1080).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    fake.set_screen(landscape)
    device = _device(adb_server, serial)
    png = device.shell("screencap -p", encoding=None)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    decoded = Image.open(io.BytesIO(png))
    assert decoded.size == (2400, 1080)
    assert decoded.convert("RGB").tobytes() == landscape.tobytes()
    assert device.screenshot(error_ok=False).size == (2400, 1080)


def test_multi_display_warning_precedes_the_png_in_v1_and_is_stderr_in_v2(adb_server: AdbServer,
                                                                          make_device: MakeDevice) -> None:  # fmt: skip
    fake, serial = make_device(size=(1080, 2400))
    fake.fault("multi_display_warning", True)
    device = _device(adb_server, serial)
    merged = device.shell("screencap -p", encoding=None)
    warning = MULTI_DISPLAY_WARNING.encode() + b"\n"
    assert merged.startswith(warning) and merged[len(warning) :].startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(merged[len(warning) :])).size == (1080, 2400)
    apart = device.shell2("screencap -p", encoding=None, v2=True)
    assert apart.stderr == warning and apart.stdout.startswith(b"\x89PNG") and apart.returncode == 0
    assert device.shell2("screencap -d 0 -p", encoding=None, v2=True).stderr == b""
    fake.fault("multi_display_warning", None)
    assert device.shell("screencap -p", encoding=None).startswith(b"\x89PNG")


def test_raw_capture_fault_leaves_png_working(adb_server: AdbServer, make_device: MakeDevice) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.fault("screencap_raw_unsupported", True)
    device = _device(adb_server, serial)
    raw = device.shell2("screencap", encoding=None, v2=True)
    assert raw.returncode == 1 and raw.stdout == b"" and b"screencap" in raw.stderr
    png = device.shell2("screencap -p", encoding=None, v2=True)
    assert png.returncode == 0 and Image.open(io.BytesIO(png.stdout)).size == (1080, 2400)


def test_a_slow_capture_times_out_and_is_killed_when_the_host_gives_up(adb_server: AdbServer,
                                                                       make_device: MakeDevice) -> None:  # fmt: skip
    fake, serial = make_device()
    fake.fault("screencap_delay", 30)
    with pytest.raises(adbutils.AdbTimeout):  # not the 30 s the capture takes
        _device(adb_server, serial).shell2("screencap", timeout=0.5, encoding=None, v2=True)
    stub = str(fake.bin / "screencap")
    eventually(lambda: not _running(stub), what="the timed-out screencap to be killed")
    fake.fault("screencap_delay", None)
    assert len(_device(adb_server, serial).shell2("screencap", encoding=None, v2=True).stdout) == 16 + 1080 * 2400 * 4


def test_uiautomator_dump_is_pulled_over_sync_and_its_faults_count_down(adb_server: AdbServer,
                                                                        make_device: MakeDevice) -> None:  # fmt: skip
    fake, serial = make_device()
    xml = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node text=\"Hi\"/>"
    xml += "</hierarchy>"
    fake.set_ui(xml)
    device = _device(adb_server, serial)
    assert device.shell("uiautomator dump") == "UI hierchary dumped to: /sdcard/window_dump.xml"
    assert device.sync.read_bytes("/sdcard/window_dump.xml") == xml.encode()
    assert device.dump_hierarchy() == xml
    fake.fault("ui_null_root", 1)
    fake.fault("ui_idle", 2)
    path = "/data/local/tmp/ui.xml"
    outputs = [device.shell2(f"rm -f {path}; uiautomator dump {path}", v2=True) for _ in range(4)]
    assert [(o.stdout, o.returncode) for o in outputs] == [
        ("ERROR: null root node returned by UiTestAutomationBridge.\n", 0),
        ("ERROR: could not get idle state.\n", 0),
        ("ERROR: could not get idle state.\n", 0),
        (f"UI hierchary dumped to: {path}\n", 0),
    ]
    fake.fault("ui_null_root", True)  # on until cleared
    for _ in range(2):
        assert device.shell(f"rm -f {path}; uiautomator dump {path}").startswith("ERROR: null root node")
        assert not device.sync.exists(path)


def test_push_pull_stat_and_list(adb_server: AdbServer, make_device: MakeDevice, tmp_path: Path) -> None:
    fake, serial = make_device()
    device = _device(adb_server, serial)
    payload = bytes(range(256)) * 1000
    device.sync.push(payload, "/data/local/tmp/new/x.bin", mode=0o644)
    assert (fake.fs / "data/local/tmp/new/x.bin").read_bytes() == payload
    assert device.sync.read_bytes("/data/local/tmp/new/x.bin") == payload
    info = device.sync.stat("/data/local/tmp/new/x.bin")
    assert (info.size, oct(info.mode)) == (len(payload), oct(0o100644))
    assert not device.sync.exists("/data/local/tmp/missing")
    assert [entry.path for entry in device.sync.list("/data/local/tmp/new")] == [".", "..", "x.bin"]
    device.sync.pull("/data/local/tmp/new/x.bin", tmp_path / "pulled.bin")
    assert (tmp_path / "pulled.bin").read_bytes() == payload
    assert device.shell("cat /data/local/tmp/new/x.bin | wc -c") == str(len(payload))
    # the adb client itself uses the v2 requests these features advertise (STA2, LST2, LIS2)
    (tmp_path / "up.txt").write_text("from the host")
    assert "1 file pushed" in adb_server.adb("-s", serial, "push", str(tmp_path / "up.txt"), "/sdcard/")
    assert (fake.fs / "sdcard/up.txt").read_text() == "from the host"
    assert "1 file pulled" in adb_server.adb("-s", serial, "pull", "/sdcard/up.txt", str(tmp_path / "down.txt"))
    assert (tmp_path / "down.txt").read_text() == "from the host"
    assert "up.txt" in adb_server.adb("-s", serial, "ls", "/sdcard").split()
    assert "No such file or directory" in adb_server.adb("-s", serial, "pull", "/sdcard/none", str(tmp_path / "n"))


def test_input_calls_are_recorded_after_the_shell_unquotes_them(adb_server: AdbServer,
                                                                make_device: MakeDevice) -> None:  # fmt: skip
    fake, serial = make_device()
    device = _device(adb_server, serial)
    device.shell("input tap 540 1200")
    device.shell(["input", "text", "it's a \"quoted\" text & more"])
    device.send_keys("hello%sworld")
    device.swipe(100, 200, 300, 400, 0.25)
    device.keyevent("KEYCODE_BACK")
    device.shell("input keyevent 66; input keyboard text abc")
    assert fake.inputs() == [
        ["tap", "540", "1200"],
        ["text", "it's a \"quoted\" text & more"],
        ["text", "hello%sworld"],
        ["swipe", "100", "200", "300", "400", "250"],
        ["keyevent", "KEYCODE_BACK"],
        ["keyevent", "66"],
        ["keyboard", "text", "abc"],
    ]


def test_input_text_rejects_non_ascii_like_android(adb_server: AdbServer, make_device: MakeDevice) -> None:
    fake, serial = make_device()
    result = _device(adb_server, serial).shell2(["input", "text", "café"], v2=True)
    assert result.returncode == 255 and result.stdout == ""
    assert "Exception occurred while executing 'text':" in result.stderr
    assert "java.lang.NullPointerException" in result.stderr
    assert fake.inputs() == []


def test_apps_pidof_and_logcat(adb_server: AdbServer, make_device: MakeDevice) -> None:
    fake, serial = make_device()
    device = _device(adb_server, serial)
    device.app_stop("com.example")
    device.app_start("com.example", ".Main")
    assert "Events injected: 1" in device.shell("monkey -p com.other -c android.intent.category.LAUNCHER 1")
    assert fake.apps() == [
        ["am", "force-stop", "com.example"],
        ["am", "start", "-n", "com.example/.Main"],
        ["monkey", "-p", "com.other", "-c", "android.intent.category.LAUNCHER", "1"],
    ]
    fake.set_pids({"com.example": 4321})
    assert device.shell("pidof -s com.example") == "4321"
    assert device.shell2("pidof com.missing", v2=True).returncode == 1
    lines = ["11-23 10:00:00.000  4321  4321 I Example : started", "11-23 10:00:01.000  4321  4322 E Example : boom"]
    fake.set_logcat(lines)
    assert device.shell("logcat -d -v threadtime -t 100").splitlines() == lines
    assert fake.logcat_args() == [["-d", "-v", "threadtime", "-t", "100"]]


def test_unknown_services_are_refused(adb_server: AdbServer, make_device: MakeDevice) -> None:
    _, serial = make_device()
    device = _device(adb_server, serial)
    connection = device.open_transport()
    connection.send_command("no-such-service:")
    with pytest.raises(adbutils.AdbError):
        connection.check_okay()
    connection.close()
    assert device.shell("echo still fine") == "still fine"


def test_unauthorized_and_offline_devices_are_listed_so(adb_server: AdbServer, make_device: MakeDevice) -> None:
    _, good = make_device()
    _, locked = make_device(mode="unauthorized")
    _, dead = make_device(mode="offline")
    assert adb_server.devices() == {good: "device", locked: "unauthorized", dead: "offline"}
    client = adbutils.AdbClient(host="127.0.0.1", port=adb_server.port)
    assert {info.serial: info.state for info in client.list()} == adb_server.devices()
    for serial, message in ((locked, "unauthorized"), (dead, "offline")):
        with pytest.raises(adbutils.AdbError, match=message):
            client.device(serial).shell("echo hi")


def test_two_devices_of_different_sizes(adb_server: AdbServer, make_device: MakeDevice) -> None:
    small_fake, small = make_device(model="Small", size=(1080, 2400))
    big_fake, big = make_device(model="Big", size=(1440, 3120))
    devices = {serial: _device(adb_server, serial) for serial in (small, big)}
    assert {s: tuple(d.window_size()) for s, d in devices.items()} == {small: (1080, 2400), big: (1440, 3120)}
    assert {s: d.prop.model for s, d in devices.items()} == {small: "Small", big: "Big"}
    assert {s: d.screenshot(error_ok=False).size for s, d in devices.items()} == {small: (1080, 2400),
                                                                                   big: (1440, 3120)}  # fmt: skip
    devices[big].shell("input tap 1 2")
    assert (small_fake.inputs(), big_fake.inputs()) == ([], [["tap", "1", "2"]])
    adb_server.disconnect(small)
    assert adb_server.devices() == {big: "device"}


def test_fake_device_fixture_is_the_same_factory(fake_device: MakeDevice, adb_server: AdbServer) -> None:
    fake, serial = fake_device(size=(720, 1600))
    assert isinstance(fake, FakeDevice) and serial == f"127.0.0.1:{fake.port}"
    assert tuple(_device(adb_server, serial).window_size()) == (720, 1600)


def test_stopping_leaves_no_adb_process_or_port(tmp_path: Path) -> None:
    server = AdbServer(tmp_path / "adb").start()
    fake = FakeDevice(tmp_path / "device")
    try:
        serial = server.connect(fake)
        assert server.devices() == {serial: "device"}
        assert server.proc is not None and server.pids() == [server.proc.pid]
        assert _running(f"-P\0{server.port}\0") == [server.proc.pid]
    finally:
        fake.stop()
        server.stop()
    server.stop()  # idempotent
    fake.stop()
    assert server.pids() == [] and _running(f"-P\0{server.port}\0") == []
    for port in (server.port, fake.port):
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"port {port} still listening"
    with pytest.raises(RuntimeError, match="not running"):
        server.adb("devices")  # would otherwise start a new server on the port


def test_the_rows_of_a_capture_are_cut_out_on_the_device(adb_server: AdbServer, make_device: MakeDevice) -> None:
    """What the check before an action takes when it needs a few rows only (lookout.device.observer.rows): the device's
    own `screencap | tail -c | head -c`, the same pixels as those rows of a whole capture."""
    from lookout.device.adb import Adb
    from lookout.device.observer import Observer

    _fake, serial = make_device(size=(720, 1483))
    observer = Observer(Adb("127.0.0.1", adb_server.port, 10))
    assert observer.rows(serial, 100, 200) is None  # the layout is learnt from a whole capture first
    whole = observer.capture(serial).image
    rows = observer.rows(serial, 100, 200)
    assert rows is not None and rows.size == (720, 100)
    assert rows.tobytes() == whole.crop((0, 100, 720, 200)).tobytes()
    assert observer.rows(serial, 1400, 1600).size == (720, 83)  # cut to the screen
