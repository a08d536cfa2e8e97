"""lookout.core.archive's opening of an untrusted archive, in process: what it refuses (with the reason, before
anything is written) and that it writes journal ranges back at their offsets; and `lookout replay`'s size
argument. The attacks run for real against `lookout replay` in tests/security/test_sec_archives.py."""
from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from lookout.core.archive import MAX_NAME_PARTS, open_archive
from lookout.core.errors import BadInput, TooLarge
from lookout.replay import file_limit, parse_bytes


def _tar(path: Path, *members: tuple[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _any_range(into: Path, name: str, start: int, length: int) -> None:
    pass


def _open(path: Path, into: Path, max_bytes: int = 1 << 20) -> None:
    open_archive(path, into, max_bytes, lambda name: 1 << 20, _any_range)


@pytest.mark.parametrize(("members", "says"), [
    ((("a.json", b"1"), ("a.json", b"2")), "twice"),
    ((("/".join(["d"] * MAX_NAME_PARTS) + "/f", b""),), "not a name a replay archive holds"),
    ((("x" * 600, b""),), "not a name a replay archive holds"),
    ((("a\\b", b""),), "not a name"),
    ((("j.range", b"-5"), ("j", b"x")), "not an offset"),
    ((("j.range", b"1" * 30), ("j", b"x")), "not an offset"),
])  # fmt: skip
def test_what_no_replay_archive_holds_is_refused_before_anything_is_written(
    tmp_path: Path, members: tuple[tuple[str, bytes], ...], says: str
) -> None:
    with pytest.raises(BadInput, match=says):
        _open(_tar(tmp_path / "a.tar.gz", *members), tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_sizes_are_counted_from_the_headers_before_anything_is_written(tmp_path: Path) -> None:
    path = _tar(tmp_path / "a.tar.gz", ("a", bytes(600 << 10)), ("b", bytes(600 << 10)))
    with pytest.raises(TooLarge, match="more than 1.0 MiB"):
        _open(path, tmp_path / "data")
    assert not (tmp_path / "data").exists()
    with pytest.raises(TooLarge, match="more than a file of its kind may"):
        open_archive(path, tmp_path / "data", 1 << 30, lambda name: 100 << 10, _any_range)
    with pytest.raises(BadInput, match="which no replay archive holds"):
        open_archive(path, tmp_path / "data", 1 << 30, lambda name: None, _any_range)


def test_a_negative_size_cannot_lower_the_count(tmp_path: Path) -> None:
    header = bytearray(tarfile.TarInfo("a").tobuf(tarfile.GNU_FORMAT))
    header[124:136] = b"\xff" * 12  # base-256: -1
    header[148:156] = b" " * 8
    header[148:155] = f"{sum(header):06o}\x00".encode()
    path = tmp_path / "a.tar.gz"
    path.write_bytes(gzip.compress(bytes(header) + bytes(1024)))
    with pytest.raises(BadInput, match="negative size"):
        _open(path, tmp_path / "data")


def test_a_journal_range_goes_back_at_its_offset_as_a_hole(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    path = _tar(tmp_path / "a.tar.gz", ("t/output.raw.range", b"4096"), ("t/output.raw", b"tail"), ("f", b"whole"))
    open_archive(path, tmp_path / "data", 1 << 20, lambda name: 1 << 20,
                 lambda into, name, start, length: seen.append((name, start, length)))  # fmt: skip
    assert seen == [("t/output.raw", 4096, 4)]
    raw = (tmp_path / "data/t/output.raw").read_bytes()
    assert len(raw) == 4100 and raw.endswith(b"tail") and raw[:4096] == bytes(4096)
    assert (tmp_path / "data/f").read_bytes() == b"whole"
    assert (tmp_path / "data/t/output.raw.range").read_bytes() == b"4096"  # the journal knows where it starts


def test_the_size_argument_and_which_files_may_be_large() -> None:
    assert [parse_bytes(t) for t in ("1024", "512M", "4G", "1g", "2 GiB", "1T")] == [
        1024, 512 << 20, 4 << 30, 1 << 30, 2 << 30, 1 << 40]  # fmt: skip
    for bad in ("", "-1", "1.5G", "4X", "G"):
        with pytest.raises(ValueError):
            parse_bytes(bad)
    assert file_limit("terminals/t_0123456789/output.raw") > file_limit("devices/d/observations/o_1.png") > 0
    for never in ("timeline/summaries.jsonl", "timeline/checkpoints/00000000.json", "token", "daemon.pid",
                  "terminals/t_1/output.raw/x", "x/timeline/frames.jsonl", "profiles/p/storage.json"):  # fmt: skip
        assert file_limit(never) is None, never
