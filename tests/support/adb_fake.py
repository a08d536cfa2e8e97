"""A fake Android device for the tests: the device side of the adb wire protocol over TCP.

A real adb server registers it with `adb connect 127.0.0.1:PORT`; unmodified adbutils then works end to
end. Services: `shell:` (v1, stderr merged into stdout), `shell,v2,...:` (the shell protocol: stdout,
stderr and exit code apart), `exec:` (raw, merged like v1) and `sync:` (STAT/STA2/LST2, LIST/LIS2, RECV,
SEND) with device paths mapped into `root/fs`; any other service is refused with CLSE.

Commands run in a real `/bin/sh -c` (cwd `root/fs`, PATH starting with `root/bin`) where stub `getprop`,
`wm`, `dumpsys`, `screencap`, `input`, `uiautomator`, `am`, `monkey`, `pidof` and `logcat` read what the
test set in `root/state` and record what they were asked. Modes: "device" (normal), "unauthorized"
(asks for a signature it never accepts), "offline" (accepts the connection, never answers the handshake).
"""
from __future__ import annotations

import errno
import json
import os
import posixpath
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Self

import PIL
from PIL import Image

from tests.support.screens import render_dump


def _command_id(name: bytes) -> int:
    return int.from_bytes(name, "little")


A_CNXN, A_AUTH, A_OPEN, A_OKAY, A_CLSE, A_WRTE = map(_command_id, (b"CNXN", b"AUTH", b"OPEN", b"OKAY", b"CLSE",
                                                                    b"WRTE"))  # fmt: skip
AUTH_TOKEN, AUTH_SIGNATURE = 1, 2
VERSION = 0x01000001  # skips payload checksums, like every adbd since Android 9
MAX_PAYLOAD = 256 * 1024
SYNC_DATA_MAX = 64 * 1024
# What the host may use with this fake: each is implemented below. No sendrecv_v2 (SND2/RCV2), no
# compression, no abb/abb_exec (so `adb install` falls back to `pm`), no delayed_ack.
FEATURES = ("shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir")
MODES = ("device", "unauthorized", "offline")
LAUNCHER_WINDOW = "com.android.launcher3/com.android.launcher3.uioverride.QuickstepLauncher"
AVOIDED_PORTS = frozenset({5037, *range(5554, 5586)})  # the default server; the emulator ports it scans
MULTI_DISPLAY_WARNING = (
    "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display "
    "found, however this default is not guaranteed to be consistent across captures. A display id should be "
    "specified."
)
STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")  # id, error, dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime
DENT_V1 = struct.Struct("<4sIIII")  # id, mode, size, mtime, namelen


def _packet(command: int, arg0: int, arg1: int, data: bytes = b"") -> bytes:
    header = struct.pack("<6I", command, arg0, arg1, len(data), sum(data) & 0xFFFFFFFF, command ^ 0xFFFFFFFF)
    return header + data


def default_screen(width: int, height: int) -> Image.Image:
    """A non-black test screen: six horizontal colour bands."""
    colours = [(200, 40, 40), (40, 160, 60), (40, 80, 200), (230, 200, 40), (150, 60, 180), (230, 230, 230)]
    image = Image.new("RGB", (width, height))
    for i, colour in enumerate(colours):
        image.paste(colour, (0, height * i // len(colours), width, height * (i + 1) // len(colours)))
    return image


def ui_node(cls: str, text: str, resource_id: str, bounds: tuple[int, int, int, int], clickable: bool = False,
            package: str = "com.example") -> str:  # fmt: skip
    """One uiautomator <node/> with the attributes a real dump has."""
    flag = "true" if clickable else "false"
    left, top, right, bottom = bounds
    return (f'<node index="0" text="{text}" resource-id="{package}:id/{resource_id}" class="android.widget.{cls}" '
            f'package="{package}" content-desc="" checkable="false" checked="false" clickable="{flag}" enabled="true" '
            f'focusable="{flag}" focused="false" scrollable="false" long-clickable="false" password="false" '
            f'selected="false" bounds="[{left},{top}][{right},{bottom}]" />')  # fmt: skip


def ui_dump(*nodes: str) -> str:
    """A uiautomator dump of these nodes, as `uiautomator dump` writes it."""
    return f"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<hierarchy rotation=\"0\">{''.join(nodes)}</hierarchy>\n"


def default_ui(width: int, height: int) -> str:
    """A minimal uiautomator hierarchy: one full-screen launcher frame."""
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.launcher" '
        f'content-desc="" clickable="false" enabled="true" bounds="[0,0][{width},{height}]" /></hierarchy>'
    )


class _Stream:
    """One service stream: bytes from the host, and flow-controlled writes to it."""

    def __init__(self, conn: _Connection, local: int, remote: int) -> None:
        self.conn, self.local, self.remote = conn, local, remote
        self.acked = threading.Event()
        self.acked.set()
        self.closed = threading.Event()
        self.keep_input = True
        self._inbox = bytearray()
        self._inbox_changed = threading.Condition()

    def write(self, data: bytes) -> None:
        """Send data in WRTE packets of at most max_payload, each after the host's OKAY of the previous."""
        view = memoryview(data)
        while view and not self.closed.is_set():
            while not self.acked.wait(0.2):
                if self.closed.is_set() or self.conn.dead.is_set():
                    return
            self.acked.clear()
            chunk, view = view[: self.conn.max_payload], view[self.conn.max_payload :]
            self.conn.send(A_WRTE, self.local, self.remote, bytes(chunk))

    def read(self, n: int) -> bytes:
        """Exactly n bytes from the host, or fewer once the stream is closed."""
        with self._inbox_changed:
            self._inbox_changed.wait_for(lambda: len(self._inbox) >= n or self.closed.is_set())
            data = bytes(self._inbox[:n])
            del self._inbox[:n]
            return data

    def received(self, data: bytes) -> None:
        if self.keep_input:
            with self._inbox_changed:
                self._inbox += data
                self._inbox_changed.notify_all()

    def mark_closed(self) -> None:
        self.closed.set()
        with self._inbox_changed:
            self._inbox_changed.notify_all()

    def close(self) -> None:
        """Close from the device side (CLSE), unless the host already did."""
        if not self.closed.is_set():
            self.mark_closed()
            self.conn.send(A_CLSE, self.local, self.remote)
        self.conn.streams.pop(self.local, None)


class _Connection:
    """The host's TCP connection: reads packets, answers the handshake, runs one thread per stream."""

    def __init__(self, device: FakeDevice, sock: socket.socket) -> None:
        self.device, self.sock = device, sock
        self.send_lock = threading.Lock()
        self.streams: dict[int, _Stream] = {}
        self.next_id = 1
        self.max_payload = MAX_PAYLOAD
        self.dead = threading.Event()

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        try:
            with self.send_lock:
                self.sock.sendall(_packet(command, arg0, arg1, data))
        except OSError:
            self.dead.set()

    def _recv_exact(self, n: int) -> bytes:
        buffer = bytearray(n)
        view, got = memoryview(buffer), 0
        while got < n:
            count = self.sock.recv_into(view[got:])
            if not count:
                raise ConnectionError("the host closed the connection")
            got += count
        return bytes(buffer)

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
                stream.mark_closed()
            self.sock.close()

    def _handle(self, command: int, arg0: int, arg1: int, data: bytes) -> None:
        if self.device.mode == "offline":
            return  # the transport is up, the handshake never completes: the server lists it as offline
        if command == A_CNXN:
            self._on_connect(arg1)
        elif command == A_AUTH and self.device.mode == "unauthorized" and arg0 == AUTH_SIGNATURE:
            self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))  # wrong key: ask again; a public key gets silence
        elif command == A_OPEN and self.device.mode == "device":
            self._on_open(arg0, data.rstrip(b"\0").decode("utf-8", "surrogateescape"))
        elif command == A_OKAY and (stream := self.streams.get(arg1)) is not None:
            stream.acked.set()
        elif command == A_WRTE and (stream := self.streams.get(arg1)) is not None:
            stream.received(data)
            self.send(A_OKAY, arg1, arg0)
        elif command == A_CLSE and (stream := self.streams.pop(arg1, None)) and not stream.closed.is_set():
            stream.mark_closed()
            self.send(A_CLSE, arg1, arg0)

    def _on_connect(self, host_max_payload: int) -> None:
        self.max_payload = min(host_max_payload or MAX_PAYLOAD, MAX_PAYLOAD)
        if self.device.mode == "device":
            self.send(A_CNXN, VERSION, MAX_PAYLOAD, self.device.banner().encode())  # no trailing NUL
        else:
            self.send(A_AUTH, AUTH_TOKEN, 0, os.urandom(20))

    def _on_open(self, remote: int, service: str) -> None:
        handler = self.device.service(service)
        if handler is None:
            self.send(A_CLSE, 0, remote)  # what adbd answers for a service it does not have
            return
        local, self.next_id = self.next_id, self.next_id + 1
        stream = self.streams[local] = _Stream(self, local, remote)
        self.send(A_OKAY, local, remote)
        threading.Thread(target=self.device.run_service, args=(handler, stream), daemon=True).start()


class FakeDevice:
    """A fake device on 127.0.0.1:<free port>; see the module docstring."""

    def __init__(self, root: Path, *, model: str = "Pixel 7", size: tuple[int, int] = (1080, 2400),
                 mode: str = "device") -> None:  # fmt: skip
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.root, self.mode, self.model = Path(root), mode, model
        self.state, self.fs, self.bin = self.root / "state", self.root / "fs", self.root / "bin"
        for folder in (self.state, self.fs, self.bin, self.fs / "sdcard", self.fs / "data" / "local" / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        _write_stubs(self.bin)
        self._write("model", model)
        self.set_size(*size)
        self.set_rotation(0)
        self.set_focus(LAUNCHER_WINDOW)
        self.set_screen(default_screen(*size))
        self.set_ui(default_ui(*size))
        self.port = 0
        self._server: socket.socket | None = None
        self._connections: list[_Connection] = []
        self._processes: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> int:
        """Listen on a free port of 127.0.0.1 (never 5037 or an emulator port); returns the port."""
        if self._server is not None:
            return self.port
        server = _listen()
        self._server, self.port = server, server.getsockname()[1]
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()
        return self.port

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                sock, _ = server.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = _Connection(self, sock)
            with self._lock:
                self._connections.append(connection)
            threading.Thread(target=connection.run, daemon=True).start()

    def stop(self) -> None:
        """Stop listening, drop every connection and kill every command still running (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            try:
                server.shutdown(socket.SHUT_RDWR)  # wakes the accept() thread: close() alone would not
            except OSError:
                pass
            server.close()
        with self._lock:
            connections, self._connections = self._connections, []
            processes = list(self._processes)
        for connection in connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for process in processes:
            _kill_group(process)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def banner(self) -> str:
        return (f"device::ro.product.name=fake;ro.product.model={self.model};ro.product.device=fake;"
                f"features={','.join(FEATURES)}")  # fmt: skip

    # ------------------------------------------------------------------ services

    def service(self, name: str) -> Callable[[_Stream], None] | None:
        """The handler of an OPENed service, or None for a service this fake does not have."""
        kind, colon, argument = name.partition(":")
        options = kind.split(",")
        if not colon:
            return None
        if options[0] == "shell":
            v2 = "v2" in options[1:]
            return lambda stream: self._shell(stream, argument, v2=v2)
        if kind == "exec":
            return lambda stream: self._shell(stream, argument, v2=False)
        if kind == "sync":
            return self._sync
        return None

    def run_service(self, handler: Callable[[_Stream], None], stream: _Stream) -> None:
        try:
            handler(stream)
        finally:
            stream.close()

    def _env(self) -> dict[str, str]:
        return {"PATH": f"{self.bin}:/usr/bin:/bin", "FAKE_STATE": str(self.state), "FAKE_FS": str(self.fs),
                "HOME": str(self.fs), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}  # fmt: skip

    def _shell(self, stream: _Stream, command: str, *, v2: bool) -> None:
        """Run `command` in /bin/sh; v1 merges stderr into stdout, v2 frames both and adds the exit code."""
        stream.keep_input = False  # stdin (and v2's stdin/window-size packets) are ignored
        process = subprocess.Popen(
            ["/bin/sh", "-c", command], cwd=self.fs, env=self._env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE if v2 else subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        with self._lock:
            self._processes.add(process)
        threading.Thread(target=_kill_when_closed, args=(stream, process), daemon=True).start()
        write_lock = threading.Lock()

        def pump(pipe: IO[bytes], channel: int) -> None:
            while chunk := pipe.read1(MAX_PAYLOAD):  # type: ignore[attr-defined]
                with write_lock:
                    stream.write(struct.pack("<BI", channel, len(chunk)) + chunk if v2 else chunk)

        pumps = [threading.Thread(target=pump, args=(pipe, channel), daemon=True)
                 for pipe, channel in ((process.stdout, 1), (process.stderr, 2)) if pipe is not None]  # fmt: skip
        for thread in pumps:
            thread.start()
        for thread in pumps:
            thread.join()
        process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        with self._lock:
            self._processes.discard(process)
        if v2:
            stream.write(struct.pack("<BIB", 3, 1, process.returncode & 0xFF))

    def _sync(self, stream: _Stream) -> None:
        """The file sync protocol: one request after another until QUIT or a failure."""
        handlers: dict[bytes, Callable[[_Stream, bytes, str], bool]] = {
            b"STAT": self._stat_v1, b"STA2": self._stat_v2, b"LST2": self._stat_v2, b"LIST": self._list,
            b"LIS2": self._list, b"RECV": self._recv, b"SEND": self._send,
        }  # fmt: skip
        while True:
            header = stream.read(8)
            if len(header) < 8 or header[:4] == b"QUIT":
                return
            request, length = header[:4], struct.unpack("<I", header[4:])[0]
            argument = stream.read(length).decode("utf-8", "surrogateescape")
            handler = handlers.get(request)
            if handler is None:
                _sync_fail(stream, f"unknown command {request!r}")
                return
            if not handler(stream, request, argument):
                return

    def device_path(self, path: str) -> Path:
        """Where a device path lives on the host: under root/fs."""
        return self.fs / posixpath.normpath("/" + path).lstrip("/")

    def _stat_v1(self, stream: _Stream, _: bytes, path: str) -> bool:
        try:
            st = os.lstat(self.device_path(path))
            fields = (st.st_mode, st.st_size & 0xFFFFFFFF, int(st.st_mtime))
        except OSError:
            fields = (0, 0, 0)
        stream.write(b"STAT" + struct.pack("<III", *fields))
        return True

    def _stat_v2(self, stream: _Stream, request: bytes, path: str) -> bool:
        try:
            target = self.device_path(path)
            st = os.lstat(target) if request == b"LST2" else os.stat(target)
            stream.write(_stat_v2_bytes(request, st))
        except OSError as exc:
            stream.write(STAT_V2.pack(request, exc.errno or errno.EIO, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        return True

    def _list(self, stream: _Stream, request: bytes, path: str) -> bool:
        folder = self.device_path(path)
        names = [".", "..", *sorted(os.listdir(folder))] if folder.is_dir() else []
        v2 = request == b"LIS2"
        for name in names:
            try:
                st = os.lstat(folder / name)
            except OSError:
                continue
            raw = name.encode("utf-8", "surrogateescape")
            if v2:
                entry = _stat_v2_bytes(b"DNT2", st) + struct.pack("<I", len(raw))
            else:
                entry = DENT_V1.pack(b"DENT", st.st_mode, st.st_size & 0xFFFFFFFF, int(st.st_mtime), len(raw))
            stream.write(entry + raw)
        stream.write(b"DONE" + bytes(STAT_V2.size if v2 else DENT_V1.size - 4))  # an all-zero entry
        return True

    def _recv(self, stream: _Stream, _: bytes, path: str) -> bool:
        try:
            data = self.device_path(path).read_bytes()
        except OSError as exc:
            _sync_fail(stream, exc.strerror or str(exc))
            return False
        chunks = (data[start : start + SYNC_DATA_MAX] for start in range(0, len(data), SYNC_DATA_MAX))
        frames = [b"DATA" + struct.pack("<I", len(chunk)) + chunk for chunk in chunks]
        stream.write(b"".join(frames) + b"DONE" + bytes(4))  # one write: WRTE packets of max_payload each
        return True

    def _send(self, stream: _Stream, _: bytes, argument: str) -> bool:
        path, _, mode_text = argument.rpartition(",")
        if path.endswith("/"):
            _sync_fail(stream, f"couldn't create file {path}: Is a directory")
            return False
        data, mtime = bytearray(), None
        while mtime is None:
            header = stream.read(8)
            if len(header) < 8:
                return False
            kind, value = header[:4], struct.unpack("<I", header[4:])[0]
            if kind == b"DATA":
                data += stream.read(value)
            elif kind == b"DONE":
                mtime = value
            else:
                _sync_fail(stream, f"unexpected {kind!r} in SEND")
                return False
        try:
            _store(self.device_path(path), bytes(data), int(mode_text or "0"), mtime)
        except (OSError, ValueError) as exc:
            _sync_fail(stream, f"{path}: {exc}")
            return False
        stream.write(b"OKAY" + bytes(4))
        return True

    # ------------------------------------------------------------------ what the test controls

    def _write(self, name: str, value: str | bytes) -> None:
        target = self.state / name
        tmp = target.with_name(name + ".tmp")
        tmp.write_bytes(value.encode() if isinstance(value, str) else value)
        tmp.replace(target)

    def _read(self, name: str) -> str | None:
        try:
            return (self.state / name).read_text()
        except FileNotFoundError:
            return None

    def set_screen(self, image: Image.Image) -> None:
        """What screencap returns from now on (the image's size is the capture's size).

        Raw frames are stored; `screencap -p` encodes them on request, as a device does (and as slowly)."""
        rgba = image.convert("RGBA")
        self._write("screen.raw", struct.pack("<IIII", rgba.width, rgba.height, 1, 0) + rgba.tobytes())

    def set_rotation(self, rotation: int) -> None:
        """The rotation (0..3) that `dumpsys display` reports; the screen image is set apart."""
        self._write("rotation", str(rotation % 4))

    def set_size(self, width: int, height: int) -> None:
        """The natural (portrait) size `wm size` reports as Physical size."""
        self._write("size", f"{width}x{height}")

    def set_override_size(self, width: int | None, height: int | None = None) -> None:
        """`wm size`'s Override size line: set_override_size(720, 1600), or None to clear it."""
        if width is None:
            (self.state / "override_size").unlink(missing_ok=True)
        else:
            self._write("override_size", f"{width}x{height}")

    def set_focus(self, window: str | None) -> None:
        """The focused window `dumpsys window` reports (`package/activity`), or None for `mCurrentFocus=null`."""
        self._write("focus", window or "")

    def set_ui(self, xml: str) -> None:
        """What `uiautomator dump` writes."""
        self._write("ui.xml", xml)

    def show(self, xml: str, window: str | None = None) -> None:
        """A screen whose pixels are its dump drawn (tests.support.screens): the dump, the screen image at the
        device's size and, when given, the focused window."""
        size = self._screen_size()
        self.set_ui(xml)
        self.set_screen(render_dump(xml, size))
        if window is not None:
            self.set_focus(window)

    def react(self, region: tuple[int, int, int, int], xml: str, window: str | None = None) -> None:
        """The next tap (or swipe start) inside `region` (device pixels, right and bottom excluded) switches the
        screen to `xml` drawn (and the focused window to `window`), once."""
        reactions = json.loads(self._read("reactions.json") or "[]")
        ident = len(reactions) + sum(1 for _ in self.state.glob("reaction-*-ui.xml"))
        rgba = render_dump(xml, self._screen_size()).convert("RGBA")
        self._write(f"reaction-{ident}-screen.raw", struct.pack("<IIII", rgba.width, rgba.height, 1, 0) + rgba.tobytes())
        self._write(f"reaction-{ident}-ui.xml", xml)
        if window is not None:
            self._write(f"reaction-{ident}-focus", window)
        reactions.append({"id": ident, "region": list(region)})
        self._write("reactions.json", json.dumps(reactions))

    def set_bars(self, status: int | None, navigation: int | None) -> None:
        """System bars `dumpsys window` lists (Android 14's insets sources): a status bar this tall at the top and
        a navigation bar this tall at the bottom of the current screen; None: not listed."""
        self._write("bars", json.dumps([status, navigation]))

    def _screen_size(self) -> tuple[int, int]:
        raw = (self.state / "screen.raw").read_bytes()[:8]
        width, height = struct.unpack("<II", raw)
        return width, height

    def set_logcat(self, lines: list[str]) -> None:
        """What `logcat -d` prints (threadtime lines)."""
        self._write("logcat.txt", "".join(line + "\n" for line in lines))

    def set_pids(self, pids: dict[str, int]) -> None:
        """What `pidof PKG` finds."""
        self._write("pids.json", json.dumps(pids))

    def fault(self, name: str, value: Any) -> None:
        """Script a failure, or clear it with None.

        `multi_display_warning`, `screencap_raw_unsupported`: True. `screencap_delay`: seconds.
        `ui_null_root`, `ui_idle`: how many dumps fail before they work again (True: all of them)."""
        if value is None:
            (self.state / name).unlink(missing_ok=True)
        else:
            self._write(name, "on" if value is True else str(value))

    def _records(self, name: str) -> list[list[str]]:
        text = self._read(name) or ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def inputs(self) -> list[list[str]]:
        """The argv of every `input` call, without `input` itself: [["tap", "540", "1200"], ...]."""
        return self._records("inputs.jsonl")

    def apps(self) -> list[list[str]]:
        """The argv of every `am` and `monkey` call, the command's name first."""
        return self._records("apps.jsonl")

    def logcat_args(self) -> list[list[str]]:
        """The argv of every `logcat` call, without `logcat` itself."""
        return self._records("logcat_args.jsonl")

    def delayed_captures(self) -> list[list[str]]:
        """The argv of every `screencap` that the `screencap_delay` fault holds (recorded as it starts waiting)."""
        return self._records("delayed_captures.jsonl")


def _listen() -> socket.socket:
    while True:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        if server.getsockname()[1] not in AVOIDED_PORTS:
            server.listen(16)
            return server
        server.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill a command and whatever it started (it leads its own session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_when_closed(stream: _Stream, process: subprocess.Popen[bytes]) -> None:
    """A command still running when its stream closes (the host gave up) is killed."""
    stream.closed.wait()
    if process.poll() is None:
        _kill_group(process)


def _stat_v2_bytes(ident: bytes, st: os.stat_result) -> bytes:
    return STAT_V2.pack(ident, 0, st.st_dev, st.st_ino, st.st_mode, st.st_nlink, st.st_uid, st.st_gid, st.st_size,
                        int(st.st_atime), int(st.st_mtime), int(st.st_ctime))  # fmt: skip


def _sync_fail(stream: _Stream, message: str) -> None:
    raw = message.encode()
    stream.write(b"FAIL" + struct.pack("<I", len(raw)) + raw)


def _store(path: Path, data: bytes, mode: int, mtime: int) -> None:
    """A pushed file: parents made (fixed_push_mkdir), permissions and mtime kept, symlinks as links."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or (stat.S_ISLNK(mode) and path.exists()):
        path.unlink()
    if stat.S_ISLNK(mode):
        os.symlink(data.decode("utf-8", "surrogateescape"), path)
        return
    path.write_bytes(data)
    if mode & 0o777:
        path.chmod(mode & 0o777)
    if mtime:
        os.utime(path, (mtime, mtime))


# ---------------------------------------------------------------------------- the stub commands

_PY_HEAD = f"""#!{sys.executable} -IS
import json, os, sys, time
S = os.environ["FAKE_STATE"]


def state(name, default=None):
    try:
        with open(os.path.join(S, name)) as f:
            return f.read()
    except FileNotFoundError:
        return default


def record(name, argv):
    with open(os.path.join(S, name), "a") as f:
        f.write(json.dumps(argv) + "\\n")


def counted_fault(name):
    \"\"\"True while a counted fault is on; each call uses one of its failures ("on": never runs out).\"\"\"
    value = state(name)
    if value is None:
        return False
    if value.strip() == "on":
        return True
    left = int(value or 0)
    if left <= 0:
        return False
    with open(os.path.join(S, name), "w") as f:
        f.write(str(left - 1))
    return True
"""
"""The head of every Python stub (run with -I -S: isolated and fast to start)."""

_SH_STUBS = {
    "getprop": """#!/bin/sh
PATH=/usr/bin:/bin
prop() {
  case "$1" in
    ro.product.model) cat "$FAKE_STATE/model"; echo ;;
    ro.product.name|ro.product.device) echo fake ;;
    ro.build.version.sdk) echo 34 ;;
    ro.build.version.release) echo 14 ;;
    *) echo ;;
  esac
}
if [ $# -eq 0 ]; then
  for name in ro.build.version.release ro.build.version.sdk ro.product.device ro.product.model ro.product.name; do
    echo "[$name]: [$(prop $name)]"
  done
else
  prop "$1"
fi
""",
    "wm": """#!/bin/sh
PATH=/usr/bin:/bin
[ "$1" = size ] || exit 0
case "$2" in
  "") ;;
  reset) rm -f "$FAKE_STATE/override_size"; exit 0 ;;
  *) printf %s "$2" > "$FAKE_STATE/override_size"; exit 0 ;;
esac
echo "Physical size: $(cat "$FAKE_STATE/size")"
[ -f "$FAKE_STATE/override_size" ] && echo "Override size: $(cat "$FAKE_STATE/override_size")"
exit 0
""",
    "dumpsys": """#!/bin/sh
PATH=/usr/bin:/bin
if [ "$1" = window ]; then
  echo "WINDOW MANAGER WINDOWS (dumpsys window windows)"
  if [ -s "$FAKE_STATE/focus" ]; then
    echo "  mCurrentFocus=Window{5e1b2a0 u0 $(cat "$FAKE_STATE/focus")}"
  else
    echo "  mCurrentFocus=null"
  fi
  echo "  mFocusedApp=null"
  if [ -s "$FAKE_STATE/bars" ]; then
    size=$(cat "$FAKE_STATE/size"); r=$(cat "$FAKE_STATE/rotation")
    w=${size%x*}; h=${size#*x}
    [ $((r % 2)) -eq 1 ] && { t=$w; w=$h; h=$t; }
    bars=$(tr -d '[] ' < "$FAKE_STATE/bars"); status=${bars%,*}; nav=${bars#*,}
    echo "WINDOW MANAGER INSETS (dumpsys window insets)"
    [ "$status" != null ] && echo "      InsetsSource id=3 type=statusBars frame=[0,0][$w,$status] visible=true"
    [ "$nav" != null ] && echo "      InsetsSource id=4 type=navigationBars frame=[0,$((h - nav))][$w,$h] visible=true"
  fi
  exit 0
fi
[ "$1" = display ] || exit 0
size=$(cat "$FAKE_STATE/size"); r=$(cat "$FAKE_STATE/rotation")
w=${size%x*}; h=${size#*x}
[ $((r % 2)) -eq 1 ] && { t=$w; w=$h; h=$t; }
echo "DISPLAY MANAGER (dumpsys display)"
echo "  mOnlyCore=false"
echo "  mViewports=[DisplayViewport{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:0', \
physicalPort=0, orientation=$r, logicalFrame=Rect(0, 0 - $w, $h), physicalFrame=Rect(0, 0 - $w, $h), \
deviceWidth=$w, deviceHeight=$h}]"
""",
}

_FILE_COMMANDS = ("cat", "chmod", "cp", "ls", "mkdir", "mv", "rm", "stat", "touch")
_FILE_COMMAND = """#!/bin/sh
# A device path (/sdcard/..., /data/...) lives under $FAKE_FS: rewrite absolute arguments, run the real one.
name=${0##*/}
n=$#
while [ "$n" -gt 0 ]; do
  arg=$1; shift; n=$((n - 1))
  case $arg in /dev/*|/proc/*|"$FAKE_FS"/*|"$FAKE_STATE"/*) ;; /*) arg=$FAKE_FS$arg ;; esac
  set -- "$@" "$arg"
done
PATH=/usr/bin:/bin exec "$name" "$@"
"""
"""Common file commands, so that `rm -f /data/local/tmp/x.xml` or `cat /sdcard/x` act on the fake's files
(the shell's own redirections, `> /sdcard/x`, still reach the host's paths)."""

_PY_STUBS = {
    "screencap": f"""sys.path.append({str(Path(PIL.__file__).parent.parent)!r})  # Pillow, for -p only
args, png, display, target = sys.argv[1:], False, None, None
while args:
    arg = args.pop(0)
    if arg == "-p":
        png = True
    elif arg == "-d" and args:
        display = args.pop(0)
    elif not arg.startswith("-"):
        target = arg
delay = state("screencap_delay")
if delay:
    record("delayed_captures.jsonl", sys.argv[1:])
    time.sleep(float(delay))
if state("multi_display_warning") and display is None:
    print({MULTI_DISPLAY_WARNING!r}, file=sys.stderr, flush=True)
png = png or bool(target and target.endswith(".png"))
if not png and state("screencap_raw_unsupported"):
    print("screencap: raw capture is not supported on this display", file=sys.stderr)
    sys.exit(1)
with open(os.path.join(S, "screen.raw"), "rb") as f:
    raw = f.read()
out = open(os.path.join(os.environ["FAKE_FS"], target.lstrip("/")), "wb") if target else sys.stdout.buffer
if png:  # encoded here, as screencap -p does on a device (zlib level 6, Skia's default)
    from PIL import Image
    width, height = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:8], "little")
    Image.frombytes("RGBA", (width, height), raw[16:]).save(out, "PNG", compress_level=6)
else:
    out.write(raw)
out.flush()
""",
    "input": """SOURCES = {"dpad", "keyboard", "mouse", "touchpad", "gamepad", "touchnavigation", "joystick",
           "touchscreen", "stylus", "trackball", "rotaryencoder"}
argv = sys.argv[1:]
words = [a for a in argv if a not in SOURCES]
if words[:1] == ["text"] and not " ".join(words[1:]).isascii():
    # What Android's InputShellCommand prints when KeyCharacterMap.getEvents() finds no keys for a character
    sys.stderr.write("\\nException occurred while executing 'text':\\n"
                     "java.lang.NullPointerException: Attempt to get length of null array\\n"
                     "\\tat com.android.server.input.InputShellCommand.sendText(InputShellCommand.java:364)\\n"
                     "\\tat com.android.server.input.InputShellCommand.runText(InputShellCommand.java:344)\\n"
                     "\\tat com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:262)\\n")
    sys.exit(255)
record("inputs.jsonl", argv)
# A scripted reaction: a tap (or a swipe's start) inside a reaction's region switches the screen, the dump and
# the focused window to the reaction's, as the app would on that touch.
if words[:1] in (["tap"], ["swipe"]) and len(words) >= 3:
    x, y = float(words[1]), float(words[2])
    reactions = json.loads(state("reactions.json", "[]"))
    for i, reaction in enumerate(reactions):
        left, top, right, bottom = reaction["region"]
        if left <= x < right and top <= y < bottom:
            for name in ("screen.raw", "ui.xml", "focus"):
                source = os.path.join(S, f"reaction-{reaction['id']}-{name}")
                if os.path.exists(source):
                    os.replace(source, os.path.join(S, name))
            del reactions[i]
            with open(os.path.join(S, "reactions.json"), "w") as f:
                json.dump(reactions, f)
            break
""",
    "uiautomator": """argv = [a for a in sys.argv[1:] if not a.startswith("--")]
if argv[:1] != ["dump"]:
    print("Usage: uiautomator <subcommand> [options]")
    sys.exit(0)
path = argv[1] if len(argv) > 1 else "/sdcard/window_dump.xml"
for fault, message in (("ui_null_root", "ERROR: null root node returned by UiTestAutomationBridge."),
                       ("ui_idle", "ERROR: could not get idle state.")):
    if counted_fault(fault):
        print(message)
        sys.exit(0)
xml = state("ui.xml", "")
if path == "/dev/tty":
    sys.stdout.write(xml)
else:
    target = os.path.join(os.environ["FAKE_FS"], os.path.normpath("/" + path).lstrip("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        f.write(xml)
print("UI hierchary dumped to: " + path)
""",
    "am": """record("apps.jsonl", ["am"] + sys.argv[1:])
if sys.argv[1:2] == ["start"]:
    component = sys.argv[sys.argv.index("-n") + 1] if "-n" in sys.argv[:-1] else ""
    print("Starting: Intent { cmp=%s }" % component)
""",
    "monkey": """record("apps.jsonl", ["monkey"] + sys.argv[1:])
for arg in sys.argv[1:]:
    print("  bash arg: " + arg)
print("Events injected: 1")
print("## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)")
""",
    "pidof": """pids = json.loads(state("pids.json", "{}"))
names = [a for a in sys.argv[1:] if not a.startswith("-")]
found = [str(pids[n]) for n in names if n in pids]
if not found:
    sys.exit(1)
print(found[0] if "-s" in sys.argv[1:] else " ".join(found))
""",
    "logcat": """record("logcat_args.jsonl", sys.argv[1:])
sys.stdout.write(state("logcat.txt", ""))
""",
}


def _write_stubs(folder: Path) -> None:
    stubs = {**dict.fromkeys(_FILE_COMMANDS, _FILE_COMMAND), **_SH_STUBS,
             **{name: _PY_HEAD + body for name, body in _PY_STUBS.items()}}  # fmt: skip
    for name, text in stubs.items():
        path = folder / name
        path.write_text(text)
        path.chmod(0o755)
