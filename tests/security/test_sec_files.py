"""Issue 16, items 2 and 3 (and the linked terminal dir of item 9): the data dir and its files are the
daemon's user's alone. The tests run as root, so "someone else" is `nobody` (chown), and the umask test
runs the daemon under `umask 0`."""
from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from lookout.core.private_files import UnsafePath, make_dir
from lookout.core.storage import append_jsonl
from lookout.terminal.holder.journal import open_journal
from lookout.terminal.journal.deltas import DeltaLog
from tests.conftest import REPO, Daemon, free_port
from tests.support.site import serve_directory
from tests.support.terminals import delta

NOBODY = 65534


def _lookout(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """A `lookout` command without LOOKOUT_TOKEN that must end by itself (a daemon that starts instead of
    refusing ends in TimeoutExpired, failing the test)."""
    env = {k: v for k, v in os.environ.items() if k != "LOOKOUT_TOKEN"}
    return subprocess.run([sys.executable, "-m", "lookout", *map(str, args)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=30)  # fmt: skip


def _refused_serve(data_dir: Path) -> str:
    r = _lookout("serve", "--port", free_port(), "--data-dir", data_dir)
    assert r.returncode == 2, r.stderr
    assert "lookout: refusing to start: " in r.stderr
    return r.stderr


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700)
    os.chmod(path, 0o700)
    return path


def _wait_exit(api: httpx.Client, tid: str) -> None:
    r = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"exit": True}, "since": 0, "timeout_ms": 20000})
    assert r.json()["matched"] is True, r.text


def test_another_users_data_dir_and_token_are_refused(tmp_path: Path) -> None:
    """The issue's reproduction: a 1777 dir and a 0644 token of nobody's; `Bearer known` was accepted."""
    data = tmp_path / "D"
    data.mkdir()
    os.chmod(data, 0o1777)
    (data / "token").write_text("known-token-0123456789\n")
    os.chown(data, NOBODY, NOBODY)
    os.chown(data / "token", NOBODY, NOBODY)
    os.chmod(data / "token", 0o644)
    stderr = _refused_serve(data)
    assert f"data dir {data} is owned by uid {NOBODY}, not by uid {os.geteuid()}" in stderr
    assert "--data-dir" in stderr
    token = _lookout("token", "--data-dir", data)
    assert token.returncode == 2 and "known" not in token.stdout
    assert f"owned by uid {NOBODY}" in token.stderr
    assert sorted(p.name for p in data.iterdir()) == ["token"] and _mode(data) == 0o1777  # nothing touched


def test_a_token_file_of_another_user_is_refused(tmp_path: Path) -> None:
    data = _private_dir(tmp_path / "data")
    (data / "token").write_text("known-token-0123456789\n")
    os.chmod(data / "token", 0o600)
    os.chown(data / "token", NOBODY, NOBODY)
    stderr = _refused_serve(data)
    assert f"token file {data / 'token'} is owned by uid {NOBODY}" in stderr and f"rm {data / 'token'}" in stderr
    assert "known" not in _lookout("token", "--data-dir", data).stdout


def test_a_token_file_others_may_read_is_refused_with_what_to_do(tmp_path: Path) -> None:
    data = _private_dir(tmp_path / "data")
    (data / "token").write_text("known-token-0123456789\n")
    os.chmod(data / "token", 0o644)
    stderr = _refused_serve(data)
    assert f"token file {data / 'token'} is mode 0644" in stderr
    assert f"rm {data / 'token'}" in stderr and f"chmod 600 {data / 'token'}" in stderr
    os.chmod(data / "token", 0o600)  # the fix it names
    token = _lookout("token", "--data-dir", data)
    assert token.returncode == 0 and token.stdout == "known-token-0123456789\n"


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_data_dir_others_may_write_is_refused_not_tightened(tmp_path: Path, mode: int) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, mode)
    stderr = _refused_serve(data)
    assert f"data dir {data} is mode {mode:04o}, writable by others" in stderr and f"chmod 700 {data}" in stderr
    assert _mode(data) == mode and list(data.iterdir()) == []
    assert _lookout("token", "--data-dir", data).returncode == 2


def test_a_data_dir_that_is_a_link_is_refused(tmp_path: Path) -> None:
    real = _private_dir(tmp_path / "real")
    (tmp_path / "data").symlink_to(real)
    stderr = _refused_serve(tmp_path / "data")
    assert f"data dir {tmp_path / 'data'} is a symbolic link" in stderr and f"--data-dir {real}" in stderr
    assert list(real.iterdir()) == []


def test_every_file_is_0600_and_every_dir_0700_under_umask_0(
    tmp_path: Path, adb_server: Any, make_device: Callable[..., Any]
) -> None:
    """A data dir left 0755 by an earlier version is tightened (and the log says so); everything the daemon
    makes in it, for terminals, pages, devices and the timeline, is private although the umask is 0."""
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o755)
    daemon = Daemon(data, token="", LOOKOUT_ADB_PORT=str(adb_server.port))
    daemon.env.pop("LOOKOUT_TOKEN")
    daemon.start_command = ["sh", "-c", 'umask 0; exec "$@"', "sh"]
    daemon.start()
    try:
        with daemon.client(token=(data / "token").read_text().strip()) as api:
            shell = api.post("/v1/terminals", json={"command": ["bash", "-i"]}).json()["id"]
            echo = {"input": {"text": "echo private\n"}, "until": {"regex": "^private"}, "timeout_ms": 10000}
            api.post(f"/v1/terminals/{shell}/act", json=echo)
            api.post(f"/v1/terminals/{shell}/input", json={"text": "exit\n"})
            _wait_exit(api, shell)
            _, serial = make_device()
            assert api.post(f"/v1/devices/{serial}/screenshot", json={}).status_code == 200
            site = tmp_path / "site"
            site.mkdir()
            (site / "index.html").write_text("<title>x</title><button>Go</button>")
            with serve_directory(site) as url:
                page = api.post("/v1/pages", json={"url": f"{url}/index.html"}).json()["id"]
                assert api.post(f"/v1/pages/{page}/screenshot", json={}).status_code == 200
                assert api.post(f"/v1/pages/{page}/snapshot").status_code == 200
    finally:
        daemon.stop()
    assert "data dir" in daemon.log.read_text() and "tightened to 0700" in daemon.log.read_text()
    files, dirs = {}, {}
    for root, dirnames, filenames in os.walk(data):
        dirs.update((Path(root, name), _mode(Path(root, name))) for name in dirnames)
        files.update((Path(root, name), _mode(Path(root, name))) for name in filenames)
    names = {str(p.relative_to(data)) for p in files}
    terminal = f"terminals/{shell}"
    assert {"token", "timeline/frames.jsonl", f"{terminal}/meta.json", f"{terminal}/output.raw",
            f"{terminal}/output.idx", f"{terminal}/events.jsonl", f"{terminal}/screen.jsonl",
            f"{terminal}/screen.snapshot.json"} <= names  # fmt: skip
    assert any(n.startswith("pages/") and n.endswith(".png") for n in names)
    assert any(n.startswith("devices/") and n.endswith(".png") for n in names)
    assert {p: oct(m) for p, m in files.items() if m != 0o600} == {}
    assert {p: oct(m) for p, m in dirs.items() if m != 0o700} == {} and _mode(data) == 0o700


def test_a_link_planted_at_frames_jsonl_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """A link at timeline/frames.jsonl had its target (outside the data dir) truncated at start."""
    outside = tmp_path / "precious.txt"
    outside.write_text("not a frame, and not lookout's\n")
    data = _private_dir(tmp_path / "data")
    (_private_dir(data / "timeline") / "frames.jsonl").symlink_to(outside)
    stderr = _refused_serve(data)
    assert f"{data / 'timeline' / 'frames.jsonl'} is a symbolic link" in stderr
    assert outside.read_text() == "not a frame, and not lookout's\n"


def _stopped_terminal(tmp_path: Path) -> tuple[Daemon, str]:
    """A daemon that ran one terminal to its end and stopped."""
    daemon = Daemon(tmp_path / "data").start()
    with daemon.client() as api:
        tid = api.post("/v1/terminals", json={"command": "echo hello"}).json()["id"]
        _wait_exit(api, tid)
    daemon.stop()
    return daemon, tid


def test_links_planted_at_terminal_files_are_refused_not_followed(tmp_path: Path) -> None:
    daemon, tid = _stopped_terminal(tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_text("outside secret\n")
    raw = daemon.data_dir / "terminals" / tid / "output.raw"
    raw.unlink()
    raw.symlink_to(outside)
    daemon.start()
    try:
        with daemon.client() as api:
            for path in (f"/v1/terminals/{tid}/raw", f"/v1/terminals/{tid}/screen"):
                r = api.get(path)
                assert r.status_code == 409 and r.json()["error"]["code"] == "unsafe_path", r.text
                assert f"{raw} is a symbolic link" in r.json()["error"]["message"]
                assert "outside secret" not in r.text
    finally:
        daemon.stop()
    assert outside.read_text() == "outside secret\n"


def test_a_linked_terminal_dir_is_not_loaded_so_not_falsely_purged(tmp_path: Path) -> None:
    """Item 9: `purge=true` on a linked terminal dir answered purged and removed nothing."""
    daemon, tid = _stopped_terminal(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(daemon.data_dir / "terminals" / tid, elsewhere / tid)
    (daemon.data_dir / "terminals" / tid).symlink_to(elsewhere / tid)
    daemon.start()
    try:
        with daemon.client() as api:
            assert api.get(f"/v1/terminals/{tid}").status_code == 404
            assert api.delete(f"/v1/terminals/{tid}", params={"purge": "true"}).status_code == 404
    finally:
        daemon.stop()
    assert f"skipping terminal {tid}: it is a symbolic link" in daemon.log.read_text()
    assert (elsewhere / tid / "meta.json").is_file() and (elsewhere / tid / "output.raw").read_bytes()


def test_a_purge_that_cannot_remove_the_files_says_so(tmp_path: Path, daemon: Daemon, api: httpx.Client) -> None:
    """A terminal dir swapped for a link while the daemon runs: purge is a 409 naming it, the terminal stays."""
    tid = api.post("/v1/terminals", json={"command": "echo hello"}).json()["id"]
    _wait_exit(api, tid)
    directory, elsewhere = daemon.data_dir / "terminals" / tid, tmp_path / "elsewhere"
    shutil.move(directory, elsewhere)
    directory.symlink_to(elsewhere)
    r = api.delete(f"/v1/terminals/{tid}", params={"purge": "true"})
    assert r.status_code == 409 and f"its files in {directory} could not all be removed" in r.text, r.text
    assert api.get(f"/v1/terminals/{tid}").status_code == 200
    assert (elsewhere / "meta.json").is_file()


def test_the_terminal_writers_refuse_a_planted_link(tmp_path: Path) -> None:
    """The journal, the delta log and every JSON-lines append open with O_NOFOLLOW."""
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep\n")
    for name in ("output.raw", "output.idx", "screen.jsonl", "events.jsonl"):
        directory = tmp_path / name.replace(".", "-")
        directory.mkdir()
        (directory / name).symlink_to(outside)
        if name.startswith("output."):  # the journal's files: the standard library's error (ELOOP)
            with pytest.raises(OSError) as refused:
                open_journal(directory)
            assert refused.value.errno == errno.ELOOP
            continue
        with pytest.raises(UnsafePath, match=f"{directory / name} is a symbolic link"):
            if name == "screen.jsonl":
                DeltaLog(directory).append(delta([]))
            else:
                append_jsonl(directory / name, {"type": "created"})
    assert outside.read_bytes() == b"keep\n"


def test_the_mcp_shim_reads_the_token_file_with_the_same_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lookout.clients.mcp.daemon import daemon_token, error_message

    monkeypatch.delenv("LOOKOUT_TOKEN", raising=False)
    monkeypatch.setenv("LOOKOUT_DATA_DIR", str(tmp_path))
    token = tmp_path / "token"
    token.write_text("known-token-0123456789\n")
    os.chmod(token, 0o600)
    assert daemon_token() == "known-token-0123456789"
    os.chmod(token, 0o644)
    assert daemon_token() is None
    refused = httpx.Response(401, json={"error": {"code": "unauthorized", "message": "missing token"}})
    assert f"no token was found in the token file {token} (token file {token} is mode 0644" in error_message(
        refused, sent_token=False
    )
    os.chmod(token, 0o600)
    os.chown(token, NOBODY, NOBODY)
    assert daemon_token() is None
    token.unlink()
    (tmp_path / "elsewhere").write_text("planted\n")
    os.chmod(tmp_path / "elsewhere", 0o600)
    token.symlink_to(tmp_path / "elsewhere")
    assert daemon_token() is None


def test_make_dir_is_0700_under_umask_0_refuses_a_link_and_tightens_an_old_dir(tmp_path: Path) -> None:
    old_umask = os.umask(0)
    try:
        make_dir(tmp_path / "a" / "b" / "c")
    finally:
        os.umask(old_umask)
    assert [_mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3
    (tmp_path / "old").mkdir()
    os.chmod(tmp_path / "old", 0o755)
    make_dir(tmp_path / "old")
    assert _mode(tmp_path / "old") == 0o700
    (tmp_path / "elsewhere").mkdir()
    os.chmod(tmp_path / "elsewhere", 0o755)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafePath, match="link is a symbolic link"):
        make_dir(tmp_path / "link")
    assert _mode(tmp_path / "elsewhere") == 0o755
