"""A run exported as one archive (GET /v1/timeline/export) and opened by another lookout, read-only
(`lookout replay FILE`): every frame shows again what it gave the agent (the terminal screen rebuilt from the
journal range in the archive, the page snapshot, the device screenshot with its elements), nothing can be
changed there, and archives that are truncated, hold links or climb out of their directory are refused."""

from __future__ import annotations

import io
import random
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO, TOKEN, free_port


def _activity(api: httpx.Client, make_device: Callable[..., Any]) -> None:
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 60, "rows": 8}).json()["id"]
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo exported-screen\r"}, "until": {"regex": "^exported"}})
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "clear; echo afterwards\r"}, "until": {"regex": "^after"}})
    page = api.post("/v1/pages", json={"url": "data:text/html,<title>Cart</title><button>Pay</button>"}).json()["id"]
    api.post(f"/v1/pages/{page}/snapshot")
    _, serial = make_device()
    api.post(f"/v1/devices/{serial}/screenshot", json={"ui": True})


@pytest.fixture
def replayed(tmp_path: Path) -> Iterator[Callable[[Path], tuple[subprocess.Popen[bytes], str]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(archive: Path) -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        log = (tmp_path / f"replay-{port}.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "lookout", "replay", str(archive), "--port", str(port),
                                 "--token", TOKEN], cwd=REPO, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        started.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        return proc, url

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


def test_an_exported_run_is_replayed_read_only_frame_by_frame(
    adb_api: httpx.Client, make_device: Callable[..., Any], tmp_path: Path, replayed: Callable[..., Any]
) -> None:
    _activity(adb_api, make_device)
    exported = adb_api.get("/v1/timeline/export")
    assert exported.status_code == 200, exported.text
    archive = tmp_path / "run.tar.gz"
    archive.write_bytes(exported.content)
    total = adb_api.get("/v1/timeline/frames", params={"limit": 1000}).json()["frames"]
    assert int(exported.headers["X-Lookout-Frames"]) == len(total)
    originals = {f["seq"]: adb_api.get(f"/v1/timeline/frames/{f['seq']}").json()["observation"] for f in total}

    proc, url = replayed(archive)
    assert proc.poll() is None, "the replay serves"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as replay:
        frames = replay.get("/v1/timeline/frames", params={"limit": 1000}).json()["frames"]
        assert [f["original_seq"] for f in frames] == [f["seq"] for f in total]
        kinds = set()
        for frame in frames:
            again = replay.get(f"/v1/timeline/frames/{frame['seq']}").json()["observation"]
            before = originals[frame["original_seq"]]
            assert _same(again) == _same(before), frame
            if again is not None:
                kinds.add(again["kind"])
        assert {"terminal screen", "page snapshot", "device screenshot"} <= kinds
        refused = replay.post("/v1/terminals", json={"command": "bash"})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "read_only"


def _same(observation: dict[str, Any] | None) -> dict[str, Any] | None:
    """An observation less how it was rebuilt (a replay may start from another checkpoint)."""
    if observation is not None and "screen" in observation:
        observation.pop("replayed_bytes")
    return observation


def _tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return out.getvalue()


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info, b""


@pytest.mark.parametrize(("case", "content", "says"), [
    ("truncated", _tar([_file("terminals/t_0123456789/output.raw", random.randbytes(200_000))])[:100_000], "truncated"),
    ("not an archive", b"plain text, not gzip", "not a whole replay archive"),
    ("a link", _tar([_link("terminals/t_0123456789/output.raw", "/etc/passwd")]), "link"),
    ("climbs out", _tar([_file("../escaped.txt")]), "outside"),
    ("absolute", _tar([_file("/tmp/absolute.txt")]), "outside"),
])  # fmt: skip
def test_archives_that_cannot_be_trusted_are_refused(tmp_path: Path, case: str, content: bytes, says: str) -> None:
    archive = tmp_path / "bad.tar.gz"
    archive.write_bytes(content)
    done = subprocess.run([sys.executable, "-m", "lookout", "replay", str(archive), "--port", str(free_port())],
                          cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "refused" in done.stderr and says in done.stderr, (case, done.stderr)
    assert not (tmp_path.parent / "escaped.txt").exists()
