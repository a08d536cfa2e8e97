"""Retention of exited terminals (lookout.terminal.journal.retention): `POST /v1/terminals/prune`, `lookout prune` with and
without a daemon, and `lookout ls --exited`: pruned is what the answer says, and nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import REPO, Daemon
from tests.support.polling import eventually


def _lookout(data: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "lookout", *args, "--data-dir", str(data)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False, env={**os.environ, **env})  # fmt: skip


def _exited(api: httpx.Client, n: int) -> list[str]:
    """n terminals whose program has exited, oldest first (each ended after the one before)."""
    tids = []
    for i in range(n):
        tid = api.post("/v1/terminals", json={"command": ["sh", "-c", f"echo {i}"]}).json()["id"]
        eventually(lambda tid=tid: api.get(f"/v1/terminals/{tid}").json()["status"] == "exited", what="its exit")
        tids.append(tid)
    return tids


def test_prune_removes_the_oldest_exited_terminals_beyond_the_count_and_says_which(tmp_path: Path) -> None:
    data = tmp_path / "data"
    daemon = Daemon(data, LOOKOUT_RETAIN_EXITED_COUNT="2").start()
    with daemon.client() as api:
        running = api.post("/v1/terminals", json={"command": ["sleep", "300"]}).json()["id"]
        tids = _exited(api, 4)
        dry = api.post("/v1/terminals/prune", params={"dry_run": "true"}).json()
        assert [p["id"] for p in dry["pruned"]] == tids[:2] and dry["dry_run"], dry
        assert all((data / "terminals" / t).is_dir() for t in tids), "a dry run removes nothing"
        done = api.post("/v1/terminals/prune").json()
        assert [p["id"] for p in done["pruned"]] == tids[:2] and done["kept"] == 2, done
        assert done["pruned"][0]["reason"] == "more than 2 exited terminals" and done["pruned"][0]["bytes"] > 0
        listed = {t["id"] for t in api.get("/v1/terminals").json()["terminals"]}
        assert listed == {running, *tids[2:]}
        assert not (data / "terminals" / tids[0]).exists() and (data / "terminals" / tids[2]).is_dir()
        assert api.get(f"/v1/terminals/{tids[0]}").status_code == 404
        assert api.post("/v1/terminals/prune").json()["pruned"] == [], "the retention holds now"
        more = _exited(api, 1)
        through_cli = _lookout(data, "prune", LOOKOUT_RETAIN_EXITED_COUNT="2")
        assert through_cli.returncode == 0 and through_cli.stdout.startswith(f"{tids[2]}: pruned"), through_cli
        assert {t["id"] for t in api.get("/v1/terminals").json()["terminals"]} == {running, tids[3], *more}
        api.delete(f"/v1/terminals/{running}")
    daemon.finish()


def test_lookout_prune_and_ls_exited_without_a_daemon(tmp_path: Path) -> None:
    data = tmp_path / "data"
    daemon = Daemon(data, LOOKOUT_RETAIN_EXITED_COUNT="0").start()
    with daemon.client() as api:
        tids = _exited(api, 3)
    daemon.finish()
    listed = _lookout(data, "ls")
    assert listed.stdout == "" and "3 exited terminals not listed" in listed.stderr, listed
    every = _lookout(data, "ls", "--exited")
    assert [line.split(":")[0] for line in every.stdout.splitlines()] == tids, every
    dry = _lookout(data, "prune", "--dry-run", LOOKOUT_RETAIN_EXITED_COUNT="1")
    assert [line.split(":")[0] for line in dry.stdout.splitlines()] == tids[:2] and "would prune" in dry.stdout
    assert all((data / "terminals" / t).is_dir() for t in tids)
    pruned = _lookout(data, "prune", LOOKOUT_RETAIN_EXITED_COUNT="1")
    assert pruned.returncode == 0 and [line.split(":")[0] for line in pruned.stdout.splitlines()] == tids[:2], pruned
    assert sorted(p.name for p in (data / "terminals").iterdir()) == [tids[2]]
