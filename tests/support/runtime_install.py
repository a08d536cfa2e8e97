"""lookout installed without its test extra works: `python -m tests.support.runtime_install VENV`, run by
`make check` (VENV is made when missing).

The development venv holds every test tool, so a runtime dependency missing from `[project].dependencies`
goes unseen there (httpx did: /mcp answered 500 in the image). This installs lookout into VENV as a user
would, `pip install -c requirements.lock .` without the test extra, then, from outside the source tree:
1. deploy/check_imports.py imports every module of `lookout` and everything they import;
2. `lookout serve` starts from VENV, and the MCP SDK's own client (from this, the development, venv) opens a
   session over Streamable HTTP at its `/mcp`, lists the tools and drives a terminal with them.
Each step says what it found; the exit status is 0 only when both pass.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path

from tests.conftest import START_DEADLINE_S, free_port
from tests.support.mcp_client import call, over_http

REPO = Path(__file__).resolve().parents[2]
LOCK = "requirements.lock"


def install(venv: Path, workdir: Path) -> None:
    """lookout into VENV from a copy of the sources (a build in the checkout would leave build/ there, and an
    old build/ would put modules since deleted into the wheel). VENV is made anew, with the dependencies at the
    lock's versions, when they or the lock changed since it was made; else only lookout is reinstalled."""
    source = workdir / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "lookout", source / "lookout", ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    key = hashlib.sha256(json.dumps(dependencies).encode() + (REPO / LOCK).read_bytes()).hexdigest()[:16]
    made = venv / f".dependencies-{key}"
    pip = [venv / "bin/pip", "install", "-qq", "--disable-pip-version-check"]
    if made.exists():
        print(f"== {venv}: pip install --no-deps <a copy of the sources>", flush=True)
        subprocess.run([*pip, "--no-deps", "--force-reinstall", source], cwd=workdir, check=True)
        return
    print(f"== {venv}: made anew; pip install -c {LOCK} <a copy of the sources> (no extras)", flush=True)
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([*pip, "-c", REPO / LOCK, source], cwd=workdir, check=True)
    made.touch()


def check_imports(venv: Path, workdir: Path) -> bool:
    print(f"== {venv}/bin/python deploy/check_imports.py", flush=True)
    done = subprocess.run([venv / "bin/python", REPO / "deploy/check_imports.py"], cwd=workdir, check=False)
    return done.returncode == 0


def _clean_env(venv: Path, **extra: str) -> dict[str, str]:
    """The environment with nothing of the development venv in it."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *(p for p in env.get("PATH", "").split(os.pathsep)
                                                           if not p.startswith(str(Path(sys.prefix))))])  # fmt: skip
    return {**env, **extra}


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the daemon exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the daemon was not healthy within {START_DEADLINE_S} s") from None
            time.sleep(0.1)


async def mcp_session(url: str, token: str) -> list[str]:
    """Over `url`/mcp with the SDK client: the tool names, and a terminal opened, run and closed with tools."""
    async with over_http(url, token) as session:
        tools = sorted(tool.name for tool in (await session.list_tools()).tools)
        opened = await call(session, "terminal_open", command=["sh"], cols=80, rows=10)
        step = await call(session, "terminal_act", terminal_id=opened["id"], input={"text": "echo ran-$((6*7))\n"},
                          until={"regex": "ran-42"})  # fmt: skip
        await call(session, "terminal_close", terminal_id=opened["id"])
        print(f"terminal_open -> {opened['id']}; terminal_act -> {step['ended']}")
        if step["ended"] != "regex":
            raise RuntimeError(f"terminal_act did not see the command's output: {step}")
        return tools


def check_mcp(venv: Path, workdir: Path) -> bool:
    port, token = free_port(), secrets.token_urlsafe(24)
    url = f"http://127.0.0.1:{port}"
    data = workdir / "data"
    print(f"== {venv}/bin/lookout serve --port {port}; the MCP SDK client at {url}/mcp", flush=True)
    env = _clean_env(venv, LOOKOUT_TOKEN=token)
    log = workdir / "daemon.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([venv / "bin/lookout", "serve", "--port", str(port), "--data-dir", data],
                                cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        _wait_healthy(url, proc)
        tools = asyncio.run(mcp_session(url, token))
        print(f"ok: {len(tools)} tools over /mcp")
        return True
    except Exception as failure:  # noqa: BLE001 - reported with the daemon's log; the exit status says it failed
        error: BaseException = failure
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]  # the SDK's task groups wrap the error that ended the session
        print(f"FAILED: {type(error).__name__}: {error}")
        tail = log.read_text(errors="replace").splitlines()[-12:]
        print("the end of the daemon's log:", *tail, sep="\n  ")
        return False
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        subprocess.run([venv / "bin/lookout", "kill", "--all", "--data-dir", data], cwd=workdir, env=env,
                       capture_output=True, timeout=60, check=False)  # fmt: skip


def main() -> int:
    venv = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="lookout-runtime-") as tmp:
        workdir = Path(tmp)
        install(venv, workdir)
        results = [check_imports(venv, workdir), check_mcp(venv, workdir)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
