"""Issue 35, hostile replay archives: `lookout replay FILE` runs each crafted archive for real, as a subprocess
under a 500 MB address-space limit, and the archive is refused with the reason or served within that memory
without hanging (generous timeouts, no timing assertion): sparse ranges of 2 GiB and 1 TiB, sizes of 0 and
65535 in the index, a checkpoint and meta.json, 16,000 members, a 2 MB archive that claims 2 GiB. The
private copy is gone however the replay ends (SIGTERM, SIGINT, SIGKILL, a refusal), and reading a replay
writes nothing to it."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO, TOKEN, free_port
from tests.support.polling import eventually

TID = "t_0123456789"
TERMINAL = f"terminals/{TID}"
RAW = b"\x1b[1mhello from the archive\x1b[0m\r\n$ "
MEMORY_LIMIT = 500 << 20
START_S = 120


def _frame(seq: int, offset: int) -> dict[str, object]:
    text = f"[#{seq} terminal:{TID}] screen 40x10"
    return {"seq": seq, "ts": 1.0 + seq, "agent": "default", "resource": f"terminal:{TID}", "kind": "observation",
            "role": "user", "category": "terminal screen", "subject": "screen", "pinned": False,
            "refs": {"raw_offset": offset}, "data": {}, "original_seq": seq,
            "levels": {"full": {"text": text, "tokens": 12}, "line": {"text": text, "tokens": 12}}}  # fmt: skip


def _lines(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _meta(cols: int = 40, rows: int = 10) -> bytes:
    return json.dumps({"id": TID, "name": "bash", "command": "bash", "argv": ["bash"], "cwd": "/", "cols": cols,
                       "rows": rows, "engine": "avt", "shell": True, "created_at": 1.0, "pid": 1, "status": "exited",
                       "exit_code": 0}).encode()  # fmt: skip


def _checkpoint(offset: int, cols: int = 40, rows: int = 10) -> bytes:
    return json.dumps({"offset": offset, "cols": cols, "rows": rows, "dump": "", "title": ""}).encode()


def members(start: int = 0, *, size: str = "40x10", meta: bytes | None = None,
            checkpoint: bytes | None = None) -> dict[str, bytes]:  # fmt: skip
    """A run of one terminal: its journal stored from `start` (a checkpoint there when above 0; the index
    claims that much output before it), one frame showing its screen at the end."""
    end = start + len(RAW)
    files = {"timeline/frames.jsonl": _lines(_frame(1, end)), f"{TERMINAL}/meta.json": meta or _meta(),
             f"{TERMINAL}/output.idx": _lines([0.0, "r", 0, size], [0.5, "o", 0, end])}  # fmt: skip
    if start or checkpoint:
        files[f"{TERMINAL}/checkpoints/{start:016d}.json"] = checkpoint or _checkpoint(start)
    if start:
        files[f"{TERMINAL}/output.raw.range"] = str(start).encode()
    files[f"{TERMINAL}/output.raw"] = RAW
    return files


def archive(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@dataclass
class Replay:
    proc: subprocess.Popen[bytes]
    url: str
    tmp: Path
    log: Path

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def peak_memory(self) -> int:
        """The most memory the replay has held (VmHWM), in bytes."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) << 10


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[Callable[..., Replay]]:
    """`lookout replay` under a 500 MB address-space limit, its private copy under `tmp` (TMPDIR); returns
    once it serves or has exited."""
    started: list[Replay] = []

    def start(path: Path, *args: str) -> Replay:
        port = free_port()
        tmp = tmp_path / f"tmp-{port}"
        tmp.mkdir()
        log = tmp_path / f"replay-{port}.log"
        env = {**os.environ, "TMPDIR": str(tmp), "MALLOC_ARENA_MAX": "2"}
        with log.open("wb") as out:
            proc = subprocess.Popen(["prlimit", f"--as={MEMORY_LIMIT}", "--", sys.executable, "-m", "lookout", "replay",
                                     str(path), "--port", str(port), "--token", TOKEN, *args],
                                    cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        run = Replay(proc, f"http://127.0.0.1:{port}", tmp, log)
        started.append(run)
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"{run.url}/healthz", timeout=1).status_code == 200:
                    return run
            except httpx.TransportError:
                time.sleep(0.1)
        assert proc.poll() is not None, f"neither serving nor refused after {START_S} s: {run.output()}"
        return run

    yield start
    for run in started:
        if run.proc.poll() is None:
            run.proc.terminate()
            run.proc.wait(timeout=60)


def _refused(run: Replay, says: str) -> None:
    assert run.proc.wait(timeout=START_S) == 2, run.output()
    assert "refused" in run.output() and says in run.output(), run.output()
    eventually(lambda: not any(run.tmp.iterdir()), timeout=30)  # the private copy is gone


def _copy(run: Replay) -> Path:
    (folder,) = run.tmp.iterdir()
    return folder / "data"


@pytest.mark.parametrize("start", [2 << 30, 1 << 40], ids=["2GiB", "1TiB"])
def test_a_sparse_range_of_the_timeline_is_refused(tmp_path: Path, replay: Callable[..., Replay], start: int) -> None:
    files = members()
    files = {"timeline/frames.jsonl.range": str(start).encode(), **files}  # was: the timeline read it whole
    _refused(replay(archive(tmp_path / "a.tar.gz", files)), "'timeline/frames.jsonl.range', which no replay archive")


def test_what_no_export_writes_is_refused(tmp_path: Path, replay: Callable[..., Replay]) -> None:
    files = {**members(), "timeline/checkpoints/00000000.json": b"{}"}  # its frame offsets would be trusted
    _refused(replay(archive(tmp_path / "a.tar.gz", files)), "which no replay archive holds")


@pytest.mark.parametrize("start", [2 << 30, 1 << 40], ids=["2GiB", "1TiB"])
def test_a_journal_range_past_what_its_index_describes_is_refused(
    tmp_path: Path, replay: Callable[..., Replay], start: int
) -> None:
    files = members(start)
    files[f"{TERMINAL}/output.idx"] = _lines([0.0, "r", 0, "40x10"], [0.5, "o", 0, 100])
    _refused(replay(archive(tmp_path / "a.tar.gz", files)), "past the end of the journal its index describes")


@pytest.mark.parametrize("start", [2 << 30, 1 << 40], ids=["2GiB", "1TiB"])
def test_a_journal_range_without_a_checkpoint_where_it_starts_is_refused(
    tmp_path: Path, replay: Callable[..., Replay], start: int
) -> None:
    files = members(start)
    del files[f"{TERMINAL}/checkpoints/{start:016d}.json"]
    _refused(replay(archive(tmp_path / "a.tar.gz", files)), "where no checkpoint of the archive")


@pytest.mark.parametrize("start", [2 << 30, 1 << 40], ids=["2GiB", "1TiB"])
def test_a_sparse_journal_range_that_holds_together_is_served_without_reading_its_hole(
    tmp_path: Path, replay: Callable[..., Replay], start: int
) -> None:
    run = replay(archive(tmp_path / "a.tar.gz", members(start)))
    assert run.proc.poll() is None, run.output()
    end = start + len(RAW)
    with run.client() as api:
        shown = api.get("/v1/timeline/frames/1")
        assert shown.status_code == 200, shown.text
        assert "hello from the archive" in "\n".join(shown.json()["observation"]["screen"]["text"])
        live = api.get(f"/v1/terminals/{TID}/screen", params={"format": "text"})
        assert live.status_code == 200 and "hello from the archive" in live.text, live.text
        assert api.get(f"/v1/terminals/{TID}").json()["raw_size"] == end
        for path, params in ((f"/v1/terminals/{TID}/screen", {"at": 5}), (f"/v1/terminals/{TID}/recording", {}),
                             (f"/v1/terminals/{TID}/raw", {"offset": 0})):  # fmt: skip
            hole = api.get(path, params=params)  # the bytes before the range are not output: said, not shown
            assert hole.status_code == 410 and "not stored here" in hole.text, (path, hole.text)
        stored = api.get(f"/v1/terminals/{TID}/raw", params={"offset": start})
        assert stored.status_code == 200 and stored.json()["next_offset"] == end
    assert run.peak_memory() < MEMORY_LIMIT


@pytest.mark.parametrize("size", [(0, 0), (65535, 65535), (80, 0)], ids=["0x0", "65535x65535", "80x0"])
@pytest.mark.parametrize("where", ["meta.json", "output.idx", "checkpoint"])
def test_sizes_no_terminal_has_are_refused_with_the_file_and_the_reason(
    tmp_path: Path, replay: Callable[..., Replay], where: str, size: tuple[int, int]
) -> None:
    cols, rows = size
    files = {
        "meta.json": members(meta=_meta(cols, rows)),
        "output.idx": members(size=f"{cols}x{rows}"),
        "checkpoint": members(checkpoint=_checkpoint(0, cols, rows)),
    }[where]
    _refused(replay(archive(tmp_path / "a.tar.gz", files)), f"size {cols}x{rows} is outside")


@pytest.mark.parametrize("count", [16_000, 48_000])
def test_many_members_are_unpacked_in_one_pass(tmp_path: Path, replay: Callable[..., Replay], count: int) -> None:
    files = members()
    for i in range(count):  # was: each member searched for among all the others (48,000: several minutes)
        files[f"pages/p_0123456789/observations/o_{i:06d}.json"] = b""
    run = replay(archive(tmp_path / "a.tar.gz", files))
    assert run.proc.poll() is None, run.output()
    assert len(list((_copy(run) / "pages/p_0123456789/observations").iterdir())) == count
    assert run.peak_memory() < MEMORY_LIMIT


def _bomb(path: Path, claimed: int, name: str = f"{TERMINAL}/output.raw") -> Path:
    """A small tar.gz whose one member holds `claimed` bytes of zeros: gzip members of 1 MiB of zeros, each
    compressed once and repeated (a gzip file may hold many members; they read as one stream)."""
    info = tarfile.TarInfo(name)
    info.size = claimed
    mib = gzip.compress(bytes(1 << 20), compresslevel=9)
    with path.open("wb") as out:
        out.write(gzip.compress(info.tobuf(tarfile.PAX_FORMAT)))
        for _ in range(claimed >> 20):
            out.write(mib)
        out.write(gzip.compress(bytes(2 * tarfile.BLOCKSIZE)))
    return path


def test_a_2mb_archive_that_claims_2gib_is_refused_before_anything_is_written(
    tmp_path: Path, replay: Callable[..., Replay]
) -> None:
    bomb = _bomb(tmp_path / "bomb.tar.gz", 2 << 30)
    assert bomb.stat().st_size < 4 << 20
    assert sum(len(c) for c in _decompressed_prefix(bomb)) > 0  # a real gzip stream
    run = replay(bomb)
    _refused(run, "too large")
    assert "unpacks to more than 1.0 GiB" in run.output() and "--max-bytes" in run.output()


def test_a_file_read_whole_is_held_to_what_its_readers_can_take(tmp_path: Path, replay: Callable[..., Replay]) -> None:
    bomb = _bomb(tmp_path / "bomb.tar.gz", 200 << 20, "devices/emulator-5554/observations/o_0123456789.png")
    run = replay(bomb)  # within --max-bytes, but a screenshot is read whole to be served
    _refused(run, "more than a file of its kind may")


def _decompressed_prefix(path: Path) -> Iterator[bytes]:
    with gzip.open(path, "rb") as f:
        yield f.read(1 << 20)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["TERM", "INT", "KILL"])
def test_the_private_copy_is_removed_however_the_replay_ends(
    tmp_path: Path, replay: Callable[..., Replay], sig: int
) -> None:
    run = replay(archive(tmp_path / "a.tar.gz", members()))
    assert run.proc.poll() is None and (_copy(run) / TERMINAL / "output.raw").is_file(), run.output()
    run.proc.send_signal(sig)
    run.proc.wait(timeout=60)
    if sig == signal.SIGKILL:  # nothing of the process runs: its reaper removes the copy
        eventually(lambda: not any(run.tmp.iterdir()), timeout=30)
    assert not any(run.tmp.iterdir()), list(run.tmp.rglob("*"))[:5]


def test_a_sigterm_while_unpacking_leaves_no_copy(tmp_path: Path) -> None:
    files = members()
    for i in range(20_000):
        files[f"pages/p_0123456789/observations/o_{i:06d}.json"] = b"{}"
    path = archive(tmp_path / "a.tar.gz", files)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "lookout", "replay", str(path), "--port", str(free_port())], cwd=REPO,
                            env={**os.environ, "TMPDIR": str(tmp)}, stderr=subprocess.PIPE)  # fmt: skip
    eventually(lambda: any(tmp.glob("*/data")) or proc.poll() is not None, timeout=START_S, interval=0.005)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert not any(tmp.iterdir()), list(tmp.rglob("*"))[:5]


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def test_reading_a_replay_writes_nothing(tmp_path: Path, replay: Callable[..., Replay]) -> None:
    files = members()
    files["timeline/frames.jsonl"] = _lines(*(_frame(seq, len(RAW)) for seq in range(1, 4)))
    run = replay(archive(tmp_path / "a.tar.gz", files))
    assert run.proc.poll() is None, run.output()
    with run.client() as api:
        frames = api.get("/v1/timeline/frames").json()
        before = _files(_copy(run))
        for path, params in ((f"/v1/terminals/{TID}/screen", {}), (f"/v1/terminals/{TID}/screen", {"at": 3}),
                             (f"/v1/terminals/{TID}/screen", {"format": "text"}), ("/v1/timeline/frames/2", {}),
                             ("/v1/timeline/context", {"budget": 1000}), ("/v1/timeline/extract", {"from": 1, "to": 3}),
                             (f"/v1/terminals/{TID}/recording", {}), (f"/v1/terminals/{TID}/blocks", {}),
                             ("/v1/terminals", {}), ("/v1/timeline/frames", {})):  # fmt: skip
            assert api.get(path, params=params).status_code == 200, path
        assert api.get("/v1/timeline/frames").json() == frames  # was: every screen read added a frame
        dump = api.get("/v1/devices/emulator-5554/ui")  # would dump a live device's UI and store it
        assert dump.status_code == 409 and dump.json()["error"]["code"] == "read_only", dump.text
    assert _files(_copy(run)) == before


def test_frames_that_are_not_frames_end_the_timeline_where_they_start(
    tmp_path: Path, replay: Callable[..., Replay]
) -> None:
    forged = {**_frame(2, len(RAW)), "levels": {"full": {"text": 5, "tokens": "many"}, "line": {"text": [], "tokens": 1}}}
    files = members()  # (was: listed, and every context render a 500)
    files["timeline/frames.jsonl"] = _lines(_frame(1, len(RAW)), forged, _frame(3, len(RAW)))
    run = replay(archive(tmp_path / "a.tar.gz", files))
    assert run.proc.poll() is None, run.output()
    with run.client() as api:
        assert [f["seq"] for f in api.get("/v1/timeline/frames").json()["frames"]] == [1]
        assert api.get("/v1/timeline/context", params={"budget": 500}).status_code == 200


def test_an_extended_header_too_large_to_read_whole_is_refused(tmp_path: Path, replay: Callable[..., Replay]) -> None:
    pax = tarfile.TarInfo("timeline/frames.jsonl")
    pax.type, pax.size = tarfile.XHDTYPE, 1 << 30  # tarfile would read a 1 GiB pax header into memory at once
    path = tmp_path / "pax.tar.gz"
    with path.open("wb") as out:
        out.write(gzip.compress(pax.tobuf(tarfile.USTAR_FORMAT)))  # (its data need not follow: it is refused first)
        out.write(gzip.compress(bytes(2 * tarfile.BLOCKSIZE)))
    _refused(replay(path), "extended header")
