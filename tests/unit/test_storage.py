"""Crash-safe files and ids."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lookout.core import storage
from lookout.core.errors import NotFound
from lookout.core.ids import check_id, new_id
from lookout.core.private_files import read_bytes
from lookout.core.storage import append_jsonl, atomic_write_json, cut_torn_tail, iter_jsonl, line_blocks, read_json


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    append_jsonl(path, {"a": 1})
    append_jsonl(path, {"a": 2})
    with path.open("ab") as f:
        f.write(b'{"a": 3, "b"')
    assert list(iter_jsonl(path)) == [{"a": 1}, {"a": 2}]
    assert list(iter_jsonl(tmp_path / "missing.jsonl")) == []


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    atomic_write_json(path, {"v": 1})
    atomic_write_json(path, {"v": 2})
    assert read_json(path) == {"v": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


@pytest.mark.parametrize("bad", ["..", "../etc", "a/b", "a\0b", "", ".hidden", "x" * 65])
def test_unsafe_ids_are_not_found(bad: str) -> None:
    with pytest.raises(NotFound):
        check_id(bad, "terminal")


def test_new_ids_are_safe_and_distinct() -> None:
    ids = {new_id("t") for _ in range(100)}
    assert len(ids) == 100
    assert all(check_id(i, "terminal") == i and i.startswith("t_") for i in ids)


def test_a_torn_tail_is_cut_so_the_next_append_starts_clean(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    append_jsonl(path, {"a": 1})
    with open(path, "ab") as f:
        f.write(b'{"a": 2, "b"')
    assert cut_torn_tail(path) == len(b'{"a": 2, "b"')
    append_jsonl(path, {"a": 3})
    assert list(iter_jsonl(path)) == [{"a": 1}, {"a": 3}]
    assert cut_torn_tail(path) == 0 and cut_torn_tail(tmp_path / "missing.jsonl") == 0
    path.write_bytes(b"no newline at all")
    assert cut_torn_tail(path) == 17 and path.read_bytes() == b""


def test_answers_with_a_lone_surrogate_are_still_json() -> None:
    from lookout.api.responses import JSONResponse
    from lookout.api.text_guard import lone_surrogate

    body = JSONResponse({"error": {"message": "unknown key '\ud800'"}}).body
    assert json.loads(body) == {"error": {"message": "unknown key '\ud800'"}}
    assert lone_surrogate({"a": ["ok", {"b": "x\udfffy"}]}) == "body.a[1].b"
    assert lone_surrogate({"a": "\U0001f600"}) is None


@given(st.binary(max_size=80).map(lambda b: b.replace(b"\x00", b"\n")), st.integers(0, 80), st.integers(0, 12))
def test_line_blocks_give_every_line_from_an_offset_and_drop_only_overlong_ones(
    data: bytes, start: int, max_line: int
) -> None:
    """Read in chunks of 7 bytes, so lines cross chunks; the lines are those of split, the file held whole."""
    start = min(start, len(data))
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(storage, "_CHUNK", 7)
        path = Path(folder) / "f"
        path.write_bytes(data)
        got = [line for lines in line_blocks(path, start, max_line) for line in lines]
    rest = data[start:]
    whole = rest.split(b"\n")[:-1] if rest.endswith(b"\n") or not rest else rest.split(b"\n")
    assert got == [line if len(line) <= max_line else None for line in whole]


def test_a_bounded_read_refuses_a_larger_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 11)
    assert read_bytes(path, 11) == b"x" * 11
    with pytest.raises(ValueError, match="larger than 10 bytes"):
        read_bytes(path, 10)
