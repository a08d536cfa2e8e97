"""Summaries of closed blocks of frames: the deterministic summariser, and summaries.jsonl.

A summary record names the exact frame range it covers, a hash of those frames as stored, the method that
made it and its text (which carries the range and the handle to fetch the frames back). A range is
summarised once: a record with the same range and hash is never written again, and a torn last line (a
crash while writing) is skipped on read, so that range is simply summarised again.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lookout.core.storage import append_jsonl, cut_torn_tail, iter_jsonl
from lookout.core.tokens import count_tokens
from lookout.timeline.render import Summary

MAX_ITEMS = 8
TAIL_LINES = 3


def content_hash(lines: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line)
    return digest.hexdigest()[:32]


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(v for v in values if v))


def _shorten(values: list[str]) -> str:
    shown = values[-MAX_ITEMS:]
    more = len(values) - len(shown)
    return (f"(+{more} earlier) " if more else "") + ", ".join(shown)


def summarise_frames(frames: list[dict[str, Any]]) -> str:
    """What happened in the frames, per resource, from the facts the domains recorded (no model needed):
    terminals: commands with exit codes and cwd, and the last lines of failing output; pages: URLs visited
    and actions taken; devices: apps and screens, and the actions taken."""
    by_resource: dict[str, list[dict[str, Any]]] = {}
    for frame in frames:
        by_resource.setdefault(frame["resource"], []).append(frame)
    lines = []
    for resource, group in by_resource.items():
        data = [f["data"] for f in group]
        parts: list[str] = []
        commands = [d for d in data if "command" in d and "exit_code" in d]
        if commands:

            def shown(d: dict[str, Any]) -> str:
                return f"`{d['command']}` → {d['exit_code']}" + (f" in {d['cwd']}" if d.get("cwd") else "")

            failed = [d for d in commands if d["exit_code"] not in (0, None)]
            parts.append(f"{len(commands)} commands, {len(failed)} failed" +
                         (": " + _shorten([shown(d) for d in failed]) if failed else ""))  # fmt: skip
            parts.append("last: " + _shorten([shown(d) for d in commands[-3:]]))
            if failed and failed[-1].get("tail"):
                tail = failed[-1]["tail"].split("\n")[-TAIL_LINES:]
                parts.append(f"last failure `{failed[-1]['command']}`: " + " / ".join(tail))
        if urls := _unique(d.get("url") for d in data):
            parts.append("visited: " + _shorten(urls))
        if apps := _unique(d.get("app") for d in data):
            parts.append("apps: " + _shorten(apps))
        if screens := _unique(d.get("screen") for d in data):
            parts.append("screens: " + _shorten(screens))
        if actions := [d["action"] for d in data if d.get("action")]:
            parts.append(f"{len(actions)} actions: " + _shorten(actions))
        pinned = sum(1 for f in group if f["pinned"])
        observed = sum(1 for f in group if f["kind"] == "observation")
        parts.append(f"{observed} observations" + (f", {pinned} errors" if pinned else ""))
        lines.append(f"- {resource}: " + "; ".join(parts))
    return "\n".join(lines)


def summary_text(first: int, last: int, body: str, method: str) -> str:
    return (f"frames {first}-{last} summarised ({method}); GET /v1/timeline/extract?from={first}&to={last}\n"
            f"{body}")  # fmt: skip


class SummaryStore:
    """summaries.jsonl, indexed by block."""

    def __init__(self, path: Path, block_size: int) -> None:
        self.path = path
        self.block_size = block_size
        self._lock = threading.Lock()
        self._by_block: dict[int, dict[str, Any]] = {}
        cut_torn_tail(path)
        for record in iter_jsonl(path):
            if isinstance(record, dict) and {"from", "to", "hash", "method", "text", "tokens"} <= record.keys():
                self._by_block[(record["from"] - 1) // block_size] = record

    def get(self, block: int) -> Summary | None:
        record = self._by_block.get(block)
        if record is None:
            return None
        return Summary(record["from"], record["to"], record["text"], record["tokens"], record["method"])

    def has(self, block: int, digest: str) -> bool:
        record = self._by_block.get(block)
        return record is not None and record["hash"] == digest

    def blocks(self) -> list[int]:
        return sorted(self._by_block)

    def records(self) -> list[dict[str, Any]]:
        return [self._by_block[b] for b in self.blocks()]

    def add(self, first: int, last: int, digest: str, method: str, body: str) -> dict[str, Any]:
        text = summary_text(first, last, body, method)
        record = {"from": first, "to": last, "hash": digest, "method": method, "text": text,
                  "tokens": count_tokens(text), "created": time.time()}  # fmt: skip
        with self._lock:
            append_jsonl(self.path, record)
            self._by_block[(first - 1) // self.block_size] = record
        return record
