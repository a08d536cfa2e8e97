"""A fake Android device for the tests: the device side of the adb wire protocol over TCP.

A real adb server registers it with `adb connect 127.0.0.1:PORT`; unmodified adbutils then works end to
end. Shell commands run in a real `/bin/sh` (cwd `root/fs`, PATH starting with `root/bin`) where stub
`getprop`, `wm`, `dumpsys`, `screencap`, `input`, `uiautomator`, `am`, `monkey`, `pidof` and `logcat`
read what the test set in `root/state` and record what they were asked. Sync (`sync:`) maps device paths
into `root/fs`. Modes: "device" (normal), "unauthorized" (asks for a key it never accepts), "offline"
(never answers the handshake).
"""
from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from PIL import Image

CNXN, AUTH, OPEN, OKAY, CLSE, WRTE = (struct.unpack("<I", name)[0] for name in (b"CNXN", b"AUTH", b"OPEN", b"OKAY",
                                                                                b"CLSE", b"WRTE"))  # fmt: skip
VERSION = 0x01000001
MAX_PAYLOAD = 256 * 1024
FEATURES = "shell_v2,cmd"
MULTI_DISPLAY_WARNING = (
    "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display "
    "found, however this default is not guaranteed to be consistent across captures. A display id should be "
    "specified."
)
DEFAULT_UI = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.launcher" '
    'content-desc="" clickable="false" enabled="true" bounds="[0,0][1080,2400]" /></hierarchy>'
)


def _packet(command: int, arg0: int, arg1: int, data: bytes = b"") -> bytes:
    header = struct.pack("<6I", command, arg0, arg1, len(data), sum(data) & 0xFFFFFFFF, command ^ 0xFFFFFFFF)
    return header + data


def default_screen(width: int, height: int) -> Image.Image:
    """A non-black test screen: a blue band on top, a red block low in the middle, light grey elsewhere."""
    image = Image.new("RGB", (width, height), (220, 220, 220))
    image.paste((40, 90, 200), (0, 0, width, height // 4))
    image.paste((200, 60, 40), (width // 8, height * 5 // 8, width * 7 // 8, height * 11 // 16))
    return image


class _Stream:
    """One service stream: data from the host, flow control for data to it."""

    def __init__(self, conn: _Connection, local: int, remote: int) -> None:
        self.conn, self.local, self.remote = conn, local, remote
        self.acked = threading.Event()
        self.acked.set()
        self.closed = threading.Event()
        self.inbox = bytearray()
        self.inbox_ready = threading.Condition()

    def write(self, data: bytes) -> None:
        """Send to the host in WRTE packets, each after the host's OKAY of the previous one."""
        view = memoryview(data)
        while view and not self.closed.is_set():
            while not self.acked.wait(0.2):
                if self.closed.is_set() or self.conn.dead.is_set():
                    return
            self.acked.clear()
            chunk, view = view[: self.conn.max_payload], view[self.conn.max_payload :]
            self.conn.send(WRTE, self.local, self.remote, bytes(chunk))

    def read(self, n: int) -> bytes:
        """Exactly n bytes from the host, or fewer when the stream closed."""
        with self.inbox_ready:
            while len(self.inbox) < n and not self.closed.is_set():
                self.inbox_ready.wait(0.2)
            data = bytes(self.inbox[:n])
            del self.inbox[:n]
            return data

    def received(self, data: bytes) -> None:
        with self.inbox_ready:
            self.inbox += data
            self.inbox_ready.notify_all()

    def close(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self.conn.send(CLSE, self.local, self.remote)
            self.conn.streams.pop(self.local, None)


class _Connection:
    """The host's TCP connection: reads packets, answers the handshake, runs a thread per stream."""

    def __init__(self, device: FakeDevice, sock: socket.socket) -> None:
        self.device, self.sock = device, sock
        self.lock = threading.Lock()
        self.streams: dict[int, _Stream] = {}
        self.next_id = 1
        self.max_payload = MAX_PAYLOAD
        self.dead = threading.Event()

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        try:
            with self.lock:
                self.sock.sendall(_packet(command, arg0, arg1, data))
        except OSError:
            self.dead.set()

    def _recv_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def run(self) -> None:
        try:
            while True:
                command, arg0, arg1, length, _, _ = struct.unpack("<6I", self._recv_exact(24))
                self._handle(command, arg0, arg1, self._recv_exact(length) if length else b"")
        except (OSError, ConnectionError):
            pass
        finally:
            self.dead.set()
            for stream in list(self.streams.values()):
                stream.closed.set()
            self.sock.close()

    def _handle(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        mode = self.device.mode
        if command == CNXN:
            self.max_payload = min(arg1 or MAX_PAYLOAD, MAX_PAYLOAD)
            if mode == "device":
                self.send(CNXN, VERSION, MAX_PAYLOAD, self.device.banner().encode())
            elif mode == "unauthorized":
                self.send(AUTH, 1, 0, os.urandom(20))  # a token to sign; no signature is ever accepted
        elif command == AUTH and mode == "unauthorized":
            if arg0 == 2:  # a signature: refuse it by asking again; a public key (3) gets no answer
                self.send(AUTH, 1, 0, os.urandom(20))
        elif command == OPEN and mode == "device":
            local, self.next_id = self.next_id, self.next_id + 1
            stream = self.streams[local] = _Stream(self, local, arg0)
            self.send(OKAY, local, arg0)
            service = data.rstrip(b"\0").decode("utf-8", "replace")
            threading.Thread(target=self.device.serve, args=(stream, service), daemon=True).start()
        elif command == OKAY:
            stream = self.streams.get(arg1)
            if stream is not None:
                stream.acked.set()
        elif command == WRTE:
            stream = self.streams.get(arg1)
            if stream is not None:
                stream.received(data)
                self.send(OKAY, arg1, arg0)
        elif command == CLSE:
            stream = self.streams.pop(arg1, None)
            if stream is not None and not stream.closed.is_set():
                stream.closed.set()
                self.send(CLSE, arg1, arg0)
                with stream.inbox_ready:
                    stream.inbox_ready.notify_all()


class FakeDevice:
    """A fake device on 127.0.0.1:<free port>; see the module docstring."""

    def __init__(self, root: Path, *, model: str = "Pixel 7", size: tuple[int, int] = (1080, 2400),
                 mode: str = "device") -> None:  # fmt: skip
        assert mode in ("device", "unauthorized", "offline")
        self.root, self.mode = Path(root), mode
        self.state, self.fs, self.bin = self.root / "state", self.root / "fs", self.root / "bin"
        for folder in (self.state, self.fs, self.bin):
            folder.mkdir(parents=True, exist_ok=True)
        _write_stubs(self.bin)
        self._write("model", model)
        self.set_size(*size)
        self.set_rotation(0)
        self.set_screen(default_screen(*size))
        self.set_ui(DEFAULT_UI)
        self._server: socket.socket | None = None
        self._connections: list[_Connection] = []
        self._processes: set[subprocess.Popen[bytes]] = set()
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> int:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        while server.getsockname()[1] in (5555, 5037):  # 5555 would also be listed as emulator-5554
            server.close()
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
        server.listen(8)
        self._server, self.port = server, server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()
        return self.port

    def _accept(self) -> None:
        server = self._server
        assert server is not None
        while True:
            try:
                sock, _ = server.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = _Connection(self, sock)
            self._connections.append(connection)
            threading.Thread(target=connection.run, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for connection in self._connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for process in list(self._processes):
            process.kill()

    def __enter__(self) -> FakeDevice:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def banner(self) -> str:
        model = self._read("model") or "Fake"
        return f"device::ro.product.name=fake;ro.product.model={model};ro.product.device=fake;features={FEATURES}"

    # ------------------------------------------------------------------ services

    def serve(self, stream: _Stream, service: str) -> None:
        try:
            if service.startswith("shell,v2") or service.startswith("shell:") or service.startswith("exec:"):
                v2 = service.startswith("shell,v2")
                self._shell(stream, service.split(":", 1)[1], v2, merge=service.startswith("shell:"))
            elif service.startswith("sync:"):
                self._sync(stream)
        finally:
            stream.close()

    def _shell(self, stream: _Stream, command: str, v2: bool, merge: bool) -> None:
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "FAKE_STATE": str(self.state), "FAKE_FS": str(self.fs),
               "HOME": str(self.fs), "LANG": "C.UTF-8"}  # fmt: skip
        process = subprocess.Popen(
            ["/bin/sh", "-c", command or "true"], cwd=self.fs, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        )  # fmt: skip
        self._processes.add(process)
        out_lock = threading.Lock()

        def pump(pipe: Any, channel: int) -> None:
            while chunk := pipe.read1(65536):
                with out_lock:
                    stream.write(struct.pack("<BI", channel, len(chunk)) + chunk if v2 else chunk)

        pumps = [threading.Thread(target=pump, args=(process.stdout, 1), daemon=True)]
        if process.stderr is not None:
            pumps.append(threading.Thread(target=pump, args=(process.stderr, 2 if v2 else 1), daemon=True))
        for thread in pumps:
            thread.start()
        threading.Thread(target=self._kill_on_close, args=(stream, process), daemon=True).start()
        process.wait()
        for thread in pumps:
            thread.join()
        self._processes.discard(process)
        if v2:
            stream.write(struct.pack("<BIB", 3, 1, process.returncode & 0xFF))

    @staticmethod
    def _kill_on_close(stream: _Stream, process: subprocess.Popen[bytes]) -> None:
        """A command still running when the host closes its stream is killed."""
        stream.closed.wait()
        if process.poll() is None:
            process.kill()

    def _sync(self, stream: _Stream) -> None:
        while not stream.closed.is_set():
            header = stream.read(8)
            if len(header) < 8:
                return
            request, length = header[:4], struct.unpack("<I", header[4:])[0]
            arg = stream.read(length).decode("utf-8", "replace")
            if request == b"QUIT":
                return
            if request == b"STAT":
                path = self._device_path(arg)
                st = path.stat() if path.exists() else None
                fields = (st.st_mode, st.st_size, int(st.st_mtime)) if st else (0, 0, 0)
                stream.write(b"STAT" + struct.pack("<III", *fields))
            elif request == b"LIST":
                self._list(stream, self._device_path(arg))
            elif request == b"RECV":
                self._recv(stream, self._device_path(arg))
            elif request == b"SEND":
                self._send(stream, arg)
            else:
                return

    def _device_path(self, path: str) -> Path:
        return self.fs / path.lstrip("/")

    def _list(self, stream: _Stream, folder: Path) -> None:
        if folder.is_dir():
            for entry in sorted(folder.iterdir()):
                st, name = entry.stat(), entry.name.encode()
                stream.write(b"DENT" + struct.pack("<IIII", st.st_mode, st.st_size, int(st.st_mtime), len(name)) + name)
        stream.write(b"DONE" + bytes(16))

    def _recv(self, stream: _Stream, path: Path) -> None:
        if not path.is_file():
            message = b"No such file or directory"
            stream.write(b"FAIL" + struct.pack("<I", len(message)) + message)
            return
        data = path.read_bytes()
        for start in range(0, len(data), 65536):
            chunk = data[start : start + 65536]
            stream.write(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
        stream.write(b"DONE" + bytes(4))

    def _send(self, stream: _Stream, arg: str) -> None:
        path = self._device_path(arg.rsplit(",", 1)[0])
        path.parent.mkdir(parents=True, exist_ok=True)
        data = bytearray()
        while True:
            header = stream.read(8)
            if len(header) < 8:
                return
            kind, value = header[:4], struct.unpack("<I", header[4:])[0]
            if kind == b"DATA":
                data += stream.read(value)
            elif kind == b"DONE":
                break
            else:
                return
        path.write_bytes(bytes(data))
        stream.write(b"OKAY" + bytes(4))

    # ------------------------------------------------------------------ what the test controls

    def _write(self, name: str, value: str | bytes) -> None:
        target = self.state / name
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(value.encode() if isinstance(value, str) else value)
        tmp.replace(target)

    def _read(self, name: str) -> str | None:
        try:
            return (self.state / name).read_text()
        except FileNotFoundError:
            return None

    def set_screen(self, image: Image.Image) -> None:
        """What screencap returns from now on (its size is the capture's size); `screencap -p` encodes it."""
        rgba = image.convert("RGBA")
        self._write("screen.raw", struct.pack("<IIII", rgba.width, rgba.height, 1, 0) + rgba.tobytes())

    def set_rotation(self, rotation: int) -> None:
        self._write("rotation", str(rotation))

    def set_size(self, width: int, height: int) -> None:
        self._write("size", f"{width}x{height}")

    def set_override_size(self, size: tuple[int, int] | None) -> None:
        self.fault("override_size", None if size is None else f"{size[0]}x{size[1]}")

    def set_ui(self, xml: str) -> None:
        self._write("ui.xml", xml)

    def set_logcat(self, lines: list[str]) -> None:
        self._write("logcat.txt", "".join(line + "\n" for line in lines))

    def set_pids(self, pids: dict[str, int]) -> None:
        self._write("pids.json", json.dumps(pids))

    def fault(self, name: str, value: Any) -> None:
        """Turn a scripted failure on (value: True, a count or a number of seconds) or off (None)."""
        if value is None:
            (self.state / name).unlink(missing_ok=True)
        else:
            self._write(name, "1" if value is True else str(value))

    def _records(self, name: str) -> list[list[str]]:
        text = self._read(name) or ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def inputs(self) -> list[list[str]]:
        """The argv of every `input` call, without `input` itself."""
        return self._records("inputs.jsonl")

    def apps(self) -> list[list[str]]:
        """The argv of every `am` and `monkey` call, the command's name first."""
        return self._records("apps.jsonl")

    def logcat_args(self) -> list[list[str]]:
        return self._records("logcat_args.jsonl")


# ---------------------------------------------------------------------------- the stub commands

_PY = f"""#!{sys.executable}
import json, os, sys, time
S = os.environ["FAKE_STATE"]


def state(name, default=None):
    try:
        return open(os.path.join(S, name)).read()
    except FileNotFoundError:
        return default


def record(name, argv):
    with open(os.path.join(S, name), "a") as f:
        f.write(json.dumps(argv) + "\\n")
"""
"""The head of the Python stubs: where the state is, and how to read it and record a call."""

STUBS = {
    "getprop": """#!/bin/sh
case "$1" in
  ro.product.model) cat "$FAKE_STATE/model"; echo ;;
  ro.build.version.sdk) echo 34 ;;
  ro.build.version.release) echo 14 ;;
  *) echo ;;
esac
""",
    "wm": """#!/bin/sh
[ "$1" = size ] || exit 0
echo "Physical size: $(cat "$FAKE_STATE/size")"
[ -f "$FAKE_STATE/override_size" ] && echo "Override size: $(cat "$FAKE_STATE/override_size")"
exit 0
""",
    "dumpsys": """#!/bin/sh
[ "$1" = display ] || exit 0
size=$(cat "$FAKE_STATE/size")
echo "DISPLAY MANAGER (dumpsys display)"
echo "  mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:0', \
physicalPort=0, orientation=$(cat "$FAKE_STATE/rotation"), logicalFrame=Rect(0, 0 - ${size%x*}, ${size#*x})}]"
""",
    "screencap": _PY + f"""delay = state("screencap_delay")
if delay:
    time.sleep(float(delay))
if state("multi_display_warning"):
    print("{MULTI_DISPLAY_WARNING}", file=sys.stderr, flush=True)
raw = open(os.path.join(S, "screen.raw"), "rb").read()
if sys.argv[1:] == ["-p"]:  # encoded on the "device", as screencap -p does (zlib level 6, like Skia's default)
    from PIL import Image
    width, height = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:8], "little")
    Image.frombytes("RGBA", (width, height), raw[16:]).save(sys.stdout.buffer, "PNG", compress_level=6)
elif state("screencap_raw_unsupported"):
    print("screencap: failed to capture raw frame", file=sys.stderr)
    sys.exit(1)
else:
    sys.stdout.buffer.write(raw)
""",
    "input": _PY + """argv = sys.argv[1:]
if argv[:1] == ["text"] and not all(c.isascii() for c in " ".join(argv[1:])):
    print("Exception occurred while executing 'text':", file=sys.stderr)
    print("java.lang.NullPointerException: Attempt to get length of null array", file=sys.stderr)
    sys.exit(255)
record("inputs.jsonl", argv)
""",
    "uiautomator": _PY + """argv = sys.argv[1:]
if argv[:1] != ["dump"]:
    sys.exit(0)
path = argv[1] if len(argv) > 1 else "/sdcard/window_dump.xml"
for fault, message in (("ui_null_root", "ERROR: null root node returned by UiTestAutomationBridge."),
                       ("ui_idle", "ERROR: could not get idle state.")):
    left = int(state(fault, "0") or 0)
    if left > 0:
        with open(os.path.join(S, fault), "w") as f:
            f.write(str(left - 1))
        print(message)
        sys.exit(0)
target = os.path.join(os.environ["FAKE_FS"], path.lstrip("/"))
os.makedirs(os.path.dirname(target), exist_ok=True)
with open(target, "w") as f:
    f.write(state("ui.xml", ""))
print("UI hierchary dumped to: " + path)
""",
    "am": _PY + """record("apps.jsonl", ["am"] + sys.argv[1:])
""",
    "monkey": _PY + """record("apps.jsonl", ["monkey"] + sys.argv[1:])
print("  bash arg: -p")
print("Events injected: 1")
""",
    "pidof": _PY + """pids = json.loads(state("pids.json", "{}"))
names = [a for a in sys.argv[1:] if not a.startswith("-")]
found = [str(pids[n]) for n in names if n in pids]
if not found:
    sys.exit(1)
print(" ".join(found))
""",
    "logcat": _PY + """record("logcat_args.jsonl", sys.argv[1:])
sys.stdout.write(state("logcat.txt", ""))
""",
}


def _write_stubs(folder: Path) -> None:
    for name, text in STUBS.items():
        path = folder / name
        path.write_text(text)
        path.chmod(0o755)
