"""Crash-safe files and ids."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.errors import NotFound
from app.core.ids import check_id, new_id
from app.core.storage import append_jsonl, atomic_write_json, cut_torn_tail, iter_jsonl, read_json


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
    from app.api.responses import JSONResponse
    from app.api.text_guard import lone_surrogate

    body = JSONResponse({"error": {"message": "unknown key '\ud800'"}}).body
    assert json.loads(body) == {"error": {"message": "unknown key '\ud800'"}}
    assert lone_surrogate({"a": ["ok", {"b": "x\udfffy"}]}) == "body.a[1].b"
    assert lone_surrogate({"a": "\U0001f600"}) is None
