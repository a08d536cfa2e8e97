"""Two tasks on Django's admin through MCP tools: lookout's beside @playwright/mcp, on the same Chromium.

The site is Django's admin over a generated shop of 400 products (tests/support/real_pages.py), served by
`manage.py runserver` on 127.0.0.1. Each server is driven through the MCP SDK's own stdio client: lookout's
shim (`lookout-mcp`) in front of a daemon (`lookout serve`), and Playwright MCP (the npm package pinned in
bench/peers/package.json, installed there with `npm ci` when missing) with `--headless --isolated`; both
use this machine's Chromium (/usr/bin/chromium, or LOOKOUT_BROWSER_EXECUTABLE).

The tasks, as an agent that reads only what it needs would do them (a scripted agent: no model, so the
figures are the servers' own):

- edit: log in, open the products, search "Product 7", open it, set its price, save, and see the message;
- filter: log in, open the products, filter by category "Toys" and in stock "Yes", open the first product
  listed, and read its SKU.

The agent acts on the refs of what it last read. When the element it needs is not there, it reads more:
lookout's agent asks `browser_snapshot` (and `find` when the element is folded); Playwright MCP's writes the
snapshot after each action to a file and names it in its answer, so its agent reads that file (a call, and
its tokens) or, with no file since the page changed, asks `browser_snapshot`. lookout's actions ask for the
snapshot after them (`snapshot: true`). Figures per task: wall time (the first call, which starts the
browser, included), tokens read (o200k of every answer's text and of every file read) and calls; each task
runs `--rounds` times per server, alternating which goes first, and the medians are compared.

Goals (issue 37): wall time at most 1.0x Playwright MCP's, tokens read and calls no more than it.
The last line is one JSON object.

    .venv/bin/python bench/browser_tasks.py [--rounds 3]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from lookout.core.tokens import count_tokens  # noqa: E402
from tests.support.real_pages import DJANGO_PASSWORD, DJANGO_USER, make_django_site, serve_django  # noqa: E402

PEERS = REPO / "bench" / "peers"
PLAYWRIGHT_MCP = PEERS / "node_modules" / "@playwright" / "mcp" / "cli.js"
CHROMIUM = os.environ.get("LOOKOUT_BROWSER_EXECUTABLE", "/usr/bin/chromium")
GOAL_TIME = 1.0
_LINE = r'- {role} "{name}"[^\n]*?\[ref=([^\]]+)\]'


@dataclass
class Run:
    """One task's figures on one server."""

    calls: int = 0
    tokens: int = 0
    steps: list[tuple[str, float, int]] = field(default_factory=list)
    """(what, seconds, tokens) of every call."""


class Agent:
    """A scripted agent on one MCP server: it acts on refs from what it last read, and reads more only when
    the element it needs is not there."""

    def __init__(self, session: ClientSession, run: Run) -> None:
        self.session, self.run = session, run
        self.view = ""
        """What the agent last read of the page (the refs it can act on)."""

    async def call(self, tool: str, **arguments: Any) -> str:
        start = time.perf_counter()
        result = await self.session.call_tool(tool, arguments)
        text = "\n".join(c.text for c in result.content if c.type == "text")
        if result.is_error:
            raise RuntimeError(f"{tool}({arguments}): {text[:500]}")
        self.note(f"{tool} {arguments.get('action', '')}".strip(), time.perf_counter() - start, text)
        return text

    def note(self, what: str, seconds: float, text: str) -> None:
        tokens = count_tokens(text)
        self.run.calls += 1
        self.run.tokens += tokens
        self.run.steps.append((what, seconds, tokens))

    def ref(self, role: str, name: str) -> str | None:
        match = re.search(_LINE.format(role=role, name=re.escape(name)), self.view)
        return match[1] if match else None

    async def need(self, role: str, name: str) -> str:
        found = self.ref(role, name)
        if found is None:
            await self.read_more(role, name)
            found = self.ref(role, name)
        if found is None:
            raise RuntimeError(f'{type(self).__name__}: no {role} "{name}" in what it read:\n{self.view[:3000]}')
        return found

    async def read_more(self, role: str, name: str) -> None:
        raise NotImplementedError

    async def open(self, url: str) -> None:
        raise NotImplementedError

    async def click(self, role: str, name: str) -> str:
        raise NotImplementedError

    async def fill(self, role: str, name: str, text: str, submit: bool = False) -> str:
        raise NotImplementedError


class LookoutAgent(Agent):
    page = ""

    async def open(self, url: str) -> None:
        self.page = json.loads(await self.call("browser_open", url=url))["id"]
        self.view = ""

    async def read_more(self, role: str, name: str) -> None:
        """What it read is the page as it is, budgeted: the element is folded, so it is searched for (`find`);
        with nothing read since the page changed, a snapshot first."""
        if not self.view:
            self.view = await self.call("browser_snapshot", page_id=self.page)
            if self.ref(role, name) is not None:
                return
        found = json.loads(await self.call("browser_snapshot", page_id=self.page, find=f'"{name}"'))
        self.view += "\n" + "\n".join(match["line"] for match in found["matches"])

    async def _act(self, **arguments: Any) -> str:
        text = await self.call("browser_action", page_id=self.page, snapshot=True, **arguments)
        answer = json.loads(text)
        shown = answer.get("snapshot", {}).get("text", "")
        if "# Diff against" in shown:  # the page did not navigate: the refs read before hold, with the changes
            self.view += "\n" + shown
        else:
            self.view = shown
        return text

    async def click(self, role: str, name: str) -> str:
        return await self._act(action="click", ref=await self.need(role, name))

    async def fill(self, role: str, name: str, text: str, submit: bool = False) -> str:
        return await self._act(action="fill", ref=await self.need(role, name), text=text, submit=submit)


class PlaywrightAgent(Agent):
    url = ""
    """The page's URL when the view was read (refs of another document are stale)."""
    pending: Path | None = None
    """The snapshot file named by the last answer, not read yet."""

    async def _answer(self, text: str) -> str:
        linked = re.search(r"- \[Snapshot\]\(([^)]+)\)", text)
        self.pending = Path(self.cwd, linked[1]).resolve() if linked else None
        url = re.search(r"- Page URL: (\S+)", text)
        if url and url[1] != self.url:
            self.view, self.url = "", url[1]
        inline = re.search(r"### Snapshot\n```yaml\n(.*?)```", text, re.S)
        if inline:
            self.view = inline[1]
        return text

    async def open(self, url: str) -> None:
        await self._answer(await self.call("browser_navigate", url=url))

    async def read_more(self, role: str, name: str) -> None:
        if self.pending is not None and self.pending.is_file():
            start = time.perf_counter()
            text = self.pending.read_text()
            self.note("read snapshot file", time.perf_counter() - start, text)
            self.view, self.pending = text, None
            return
        await self._answer(await self.call("browser_snapshot"))

    async def click(self, role: str, name: str) -> str:
        ref = await self.need(role, name)
        return await self._answer(await self.call("browser_click", element=f'{role} "{name}"', target=ref))

    async def fill(self, role: str, name: str, text: str, submit: bool = False) -> str:
        ref = await self.need(role, name)
        return await self._answer(await self.call("browser_type", element=f'{role} "{name}"', target=ref, text=text,
                                                  submit=submit))  # fmt: skip

    cwd = str(REPO)


async def log_in(agent: Agent, base: str) -> None:
    await agent.open(f"{base}/admin/login/")
    await agent.fill("textbox", "Username:", DJANGO_USER)
    await agent.fill("textbox", "Password:", DJANGO_PASSWORD)
    await agent.click("button", "Log in")
    await agent.click("link", "Products")


async def edit_task(agent: Agent, base: str) -> None:
    await log_in(agent, base)
    await agent.fill("textbox", "Search", "Product 7", submit=True)
    await agent.click("link", "Product 7")
    await agent.fill("spinbutton", "Price:", "12.50")
    saved = await agent.click("button", "Save")
    if "was changed successfully" not in saved + agent.view:
        await agent.read_more("text", "was changed successfully")
        if "was changed successfully" not in agent.view:
            raise RuntimeError("the save's message was not seen")


async def filter_task(agent: Agent, base: str) -> None:
    await log_in(agent, base)
    await agent.click("link", "Toys")
    await agent.click("link", "Yes")
    first = re.search(r'- link "(Product \d+)"', agent.view)
    if first is None:
        await agent.read_more("link", "Product")
        first = re.search(r'- link "(Product \d+)"', agent.view)
    if first is None:
        raise RuntimeError("no product listed")
    opened = await agent.click("link", first[1])
    if "SKU-" not in opened + agent.view:
        await agent.read_more("textbox", "Sku:")
        if "SKU-" not in agent.view:
            raise RuntimeError("the product's SKU was not seen")


async def warm_up(agent: Agent, base: str) -> None:
    await agent.open(f"{base}/admin/login/")


TASKS: dict[str, Callable[[Agent, str], Awaitable[None]]] = {"edit": edit_task, "filter": filter_task}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Daemon:
    """`lookout serve` on a free port with a data dir of its own."""

    def __init__(self, folder: Path) -> None:
        self.port, self.token = _free_port(), "bench-token-" + os.urandom(8).hex()
        self.data = folder / "data"
        self.log = folder / "daemon.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Daemon:
        env = {**os.environ, "LOOKOUT_TOKEN": self.token, "LOOKOUT_BROWSER_EXECUTABLE": CHROMIUM}
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "lookout", "serve", "--port", str(self.port), "--data-dir",
                                          str(self.data)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + 60
        while b"lookout: ready at " not in self.log.read_bytes():  # what the daemon prints once it serves
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()  # one that hangs at start is not left running
                raise RuntimeError(f"the daemon did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def peers_installed() -> None:
    """@playwright/mcp as pinned in bench/peers (npm ci when missing)."""
    if not PLAYWRIGHT_MCP.is_file():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=PEERS, check=True)


SERVERS = ("lookout", "lookout-fresh", "playwright-mcp")
"""lookout as it runs (a daemon that has served a page before, its browser up), lookout on a daemon started
for the task (its browser, and Playwright's driver before it, start with the first page), Playwright MCP
(started for the task, as an MCP client starts it: its browser starts with the first call)."""


async def run_task(server: str, task: str, base: str, out: Path, running: Daemon) -> Run:
    """One task on `server`; `running` is the daemon that stays up between tasks."""
    if server != "lookout-fresh":
        return await _run_task(server, task, base, running if server == "lookout" else None, out)
    daemon = Daemon(out).start()
    try:
        return await _run_task(server, task, base, daemon, out)
    finally:
        daemon.stop()


async def _run_task(server: str, task: str, base: str, daemon: Daemon | None, out: Path) -> Run:
    if daemon is not None:
        params = StdioServerParameters(command=str(Path(sys.executable).parent / "lookout-mcp"),
                                       env={**os.environ, "LOOKOUT_URL": f"http://127.0.0.1:{daemon.port}",
                                            "LOOKOUT_TOKEN": daemon.token})  # fmt: skip
    else:
        params = StdioServerParameters(command="node", args=[str(PLAYWRIGHT_MCP), "--headless", "--isolated",
                                       "--no-sandbox", "--executable-path", CHROMIUM, "--output-dir", str(out)],
                                       cwd=str(out))  # fmt: skip
    run = Run()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        agent: Agent = LookoutAgent(session, run) if daemon is not None else PlaywrightAgent(session, run)
        if isinstance(agent, PlaywrightAgent):
            agent.cwd = str(out)
        start = time.perf_counter()
        await (warm_up if task == "warm-up" else TASKS[task])(agent, base)
        run.steps.append(("total", time.perf_counter() - start, run.tokens))
        if isinstance(agent, LookoutAgent) and agent.page:
            await session.call_tool("browser_close", {"page_id": agent.page})
    return run


async def run(args: argparse.Namespace) -> dict[str, Any]:
    peers_installed()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-tasks-"))
    results: dict[str, dict[str, list[Run]]] = {task: {server: [] for server in SERVERS} for task in TASKS}
    (folder / "running").mkdir()
    running = Daemon(folder / "running").start()
    try:
        with serve_django(make_django_site(folder / "site")) as base:
            await run_task("lookout", "warm-up", base, folder, running)  # its browser has served a page before
            for round_ in range(args.rounds):
                for task in TASKS:
                    for server in SERVERS[round_ % 3 :] + SERVERS[: round_ % 3]:
                        out = folder / f"out-{server}-{task}-{round_}"
                        out.mkdir()
                        results[task][server].append(await run_task(server, task, base, out, running))
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)
    figures: dict[str, Any] = {"load": list(os.getloadavg()), "tasks": {}, "steps": {}}
    for task, by_server in results.items():
        for server, runs in by_server.items():
            figures["tasks"][f"{task} {server}"] = {
                "seconds": statistics.median(r.steps[-1][1] for r in runs),
                "after_first_call": statistics.median(r.steps[-1][1] - r.steps[0][1] for r in runs),
                "tokens": statistics.median(r.tokens for r in runs), "calls": statistics.median(r.calls for r in runs),
                "time_ratio": None, "after_first_ratio": None, "token_ratio": None}  # fmt: skip
            figures["steps"][f"{task} {server}"] = runs[-1].steps[:-1]
        theirs = figures["tasks"][f"{task} playwright-mcp"]
        for server in SERVERS[:2]:
            ours = figures["tasks"][f"{task} {server}"]
            ours["time_ratio"] = ours["seconds"] / theirs["seconds"]
            ours["after_first_ratio"] = ours["after_first_call"] / theirs["after_first_call"]
            ours["token_ratio"] = ours["tokens"] / theirs["tokens"]
    return figures


def report(figures: dict[str, Any]) -> None:
    load = ", ".join(f"{v:.2f}" for v in figures["load"])
    print(f"\nbrowser_tasks: two Django admin tasks through MCP, lookout beside @playwright/mcp 0.0.83 on {CHROMIUM}, "
          f"{os.cpu_count()} cores, load average {load}\n")  # fmt: skip
    print("wall s: the task's wall time; after 1st: without its first call (which starts the browser); x: lookout's "
          "over Playwright MCP's\n")
    print(f"{'task':<8} {'server':<15} {'wall s':>7} {'after 1st':>9} {'tokens':>7} {'calls':>5}   {'time x':>6} "
          f"{'after 1st x':>11} {'tokens x':>8}")  # fmt: skip
    for name, row in figures["tasks"].items():
        task, server = name.split(" ")
        ratios = (f"   {row['time_ratio']:>6.2f} {row['after_first_ratio']:>11.2f} {row['token_ratio']:>8.2f}"
                  if row["time_ratio"] is not None else "")  # fmt: skip
        print(f"{task:<8} {server:<15} {row['seconds']:>7.2f} {row['after_first_call']:>9.2f} {row['tokens']:>7.0f} "
              f"{row['calls']:>5.0f}{ratios}")
    print(f"\ngoal: wall time <= {GOAL_TIME}x Playwright MCP's, tokens read and calls no more than it\n")
    for name, steps in figures.pop("steps").items():
        print(f"{name}: " + ", ".join(f"{what} {seconds:.2f} s/{tokens}" for what, seconds, tokens in steps))
    print(json.dumps({"bench": "browser_tasks", **figures}, default=lambda v: round(v, 3)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each task on each server")
    report(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
