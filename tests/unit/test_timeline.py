"""The timeline: recording, the level chooser, attribution, extraction, compression, crash safety."""
from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lookout.core.tokens import count_tokens
from lookout.timeline.compression import Compressor
from lookout.timeline.linediff import line_diff
from lookout.timeline.llm_summarizer import ChatSummarizer
from lookout.timeline.recording import FrameInput
from lookout.timeline.store import BLOCK
from lookout.timeline.timeline import Timeline


def screen(resource: str, n: int, rows: int = 40) -> FrameInput:
    text = "\n".join(f"{resource} row {r}: value {n * 7 + r}" if r % 10 == 0 else f"row {r} stays the same" for r in range(rows))
    return FrameInput(resource, "observation", "terminal screen", f"screen:\n{text}", f"screen {n} of {resource}",
                      subject="screen")  # fmt: skip


def typed(resource: str, n: int) -> FrameInput:
    return FrameInput(resource, "action", "terminal input", f"typed `make {n}⏎`", f"typed `make {n}⏎`",
                      data={"action": f"make {n}"})  # fmt: skip


def command(resource: str, n: int, code: int) -> FrameInput:
    line = f"`make {n}` exited {code} in /src"
    return FrameInput(resource, "event", "command", line + ("\nerror: it broke" if code else ""), line,
                      pinned=code != 0, data={"command": f"make {n}", "exit_code": code, "cwd": "/src",
                                              "tail": "error: it broke" if code else ""})  # fmt: skip


def fill(timeline: Timeline, steps: int, resources: tuple[str, ...] = ("terminal:a",), fail_every: int = 0) -> None:
    for n in range(steps):
        resource = resources[n % len(resources)]
        timeline.record(typed(resource, n))
        timeline.record(command(resource, n, 2 if fail_every and n % fail_every == 0 else 0))
        timeline.record(screen(resource, n))
    timeline.sync()


@pytest.fixture
def timeline(tmp_path: Path) -> Any:
    t = Timeline(tmp_path / "timeline")
    yield t
    t.close()


def covered(context: dict[str, Any]) -> list[int]:
    """Every seq the context accounts for: by its messages, or elided without one."""
    seqs: list[int] = []
    for message in context["messages"]:
        seqs.extend(range(message["source_frames"]["from"], message["source_frames"]["to"] + 1))
    for gap in context["metadata"]["elided"]:
        if gap["message"] is None:
            seqs.extend(range(gap["from"], gap["to"] + 1))
    return sorted(seqs)


def test_frames_are_numbered_with_levels_and_exact_token_counts(timeline: Timeline) -> None:
    fill(timeline, 3)
    frames = timeline.frames(None, None, None, None, 100, text=True)["frames"]
    assert [f["seq"] for f in frames] == list(range(1, 10))
    first, second = frames[2], frames[5]
    assert first["role"] == "user" and frames[0]["role"] == "assistant" and frames[1]["role"] == "system"
    assert "diff" not in first["text"], "the first observation of a resource has nothing to diff against"
    assert second["text"]["diff"].startswith("[#6 terminal:a] changed since #3")
    for level, text in second["text"].items():
        assert second["tokens"][level] == count_tokens(text)
    assert second["tokens"]["diff"] < second["tokens"]["full"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.integers(1, 90), budget=st.integers(1, 6000), fail_every=st.integers(0, 7),
       resources=st.integers(1, 3))  # fmt: skip
def test_the_budget_always_holds_and_every_frame_is_accounted_for(
    tmp_path_factory: pytest.TempPathFactory, steps: int, budget: int, fail_every: int, resources: int
) -> None:
    t = Timeline(tmp_path_factory.mktemp("t"))
    try:
        fill(t, steps, tuple(f"terminal:{i}" for i in range(resources)), fail_every)
        context = t.context(budget, None, None)
        total = sum(count_tokens(m["content"]) for m in context["messages"])
        assert total == context["metadata"]["total_tokens"] <= budget
        spans = [(m["source_frames"]["from"], m["source_frames"]["to"]) for m in context["messages"]]
        assert all(a <= b for a, b in spans) and all(b1 < a2 for (_, b1), (a2, _) in pairwise(spans))
        assert covered(context) == list(range(1, 3 * steps + 1))
        index = context["metadata"]["frame_to_message_index"]
        for seq, i in index.items():
            assert context["messages"][i]["source_frames"] == {"from": int(seq), "to": int(seq)}
    finally:
        t.close()


def test_newest_screen_in_full_older_ones_reduced(timeline: Timeline) -> None:
    fill(timeline, 10, ("terminal:a", "terminal:b"))
    context = timeline.context(8000, None, None)
    levels = {r["seq"]: r["level"] for r in context["metadata"]["rendered_frames"]}
    assert levels[30] == "full" and levels[27] == "full", "the newest screen of each terminal"
    assert levels[24] == "diff" and levels[3] == "diff", "superseded screens are diffs"
    assert context["messages"][-1]["content"].startswith("[#30 terminal:b] screen:")


def test_a_small_budget_keeps_the_newest_screen_and_the_pinned_errors(timeline: Timeline) -> None:
    fill(timeline, 150)  # 450 frames
    timeline.record(command("terminal:a", 999, 0))
    timeline.sync()
    assert timeline.store.pinned.get("*", []) == []
    timeline.record(command("terminal:a", 1000, 3))
    fill(timeline, 40)
    context = timeline.context(700, None, None)
    text = "\n".join(m["content"] for m in context["messages"])
    assert "`make 1000` exited 3" in text
    assert context["messages"][-1]["content"].startswith(f"[#{timeline.store.last_seq} terminal:a] screen:")
    assert context["metadata"]["elided"] and "GET /v1/timeline/extract?from=1&to=" in context["messages"][0]["content"]


def test_elided_handles_fetch_back_the_frames_as_captured(timeline: Timeline) -> None:
    fill(timeline, 60)
    context = timeline.context(400, None, None)
    gap = next(g for g in context["metadata"]["elided"] if g["message"] is not None and g["frames"] > 2)
    extracted = timeline.extract(gap["from"], gap["to"], None, None, "full", 500)
    assert extracted["source_frames"] == {"from": gap["from"], "to": gap["to"]}
    assert [m["source_frames"]["from"] for m in extracted["messages"]] == list(range(gap["from"], gap["to"] + 1))
    assert extracted["messages"][0]["content"].startswith(f"[#{gap['from']} terminal:a]")
    fill(timeline, 5)  # what happens later does not change what was captured
    assert timeline.extract(gap["from"], gap["to"], None, None, "full", 500)["content"] == extracted["content"]
    assert timeline.extract(gap["from"], gap["to"], None, None, "full", 2)["next_from"] == gap["from"] + 2


def test_an_extracts_tokens_count_its_content(timeline: Timeline) -> None:
    """`tokens` counts the text beside it (docs/api.md, Token counts): the joined content, not the sum of
    its messages' counts, which leaves out the blank lines between them."""
    fill(timeline, 4)
    extracted = timeline.extract(1, 12, None, None, "full", 500)
    assert len(extracted["messages"]) == 12
    assert extracted["tokens"] == count_tokens(extracted["content"])


def test_filters_by_agent_and_resource(timeline: Timeline) -> None:
    timeline.record(typed("terminal:a", 1))
    timeline.record(FrameInput("page:p", "action", "page action", "opened x", "opened x", agent="other"))
    timeline.record(screen("terminal:a", 2))
    timeline.sync()
    assert [f["seq"] for f in timeline.frames(None, None, "other", None, 10, False)["frames"]] == [2]
    assert [f["seq"] for f in timeline.frames(None, None, None, "terminal:a", 10, False)["frames"]] == [1, 3]
    only = timeline.context(100, None, "terminal:a")
    assert covered(only) == [1, 3] and all("page:p" not in m["content"] for m in only["messages"])


def test_the_prefix_stays_put_while_frames_arrive_in_the_same_block(timeline: Timeline) -> None:
    fill(timeline, 70)  # 210 frames: blocks 0-1 closed, block 2 open
    before = timeline.context(3000, None, None)
    timeline.record(typed("terminal:a", 500))
    timeline.sync()
    after = timeline.context(3000, None, None)
    n = before["metadata"]["prefix_messages"]
    assert n > 0 and after["metadata"]["prefix_hash"] == before["metadata"]["prefix_hash"]
    assert after["messages"][:n] == before["messages"][:n]


def test_a_torn_last_line_is_skipped_and_cut_off(tmp_path: Path) -> None:
    t = Timeline(tmp_path)
    fill(t, 4)
    t.close()
    with open(tmp_path / "frames.jsonl", "ab") as f:
        f.write(b'{"seq": 13, "ts": 1.0, "agent": "def')
    t = Timeline(tmp_path)
    assert t.store.last_seq == 12
    t.record(typed("terminal:a", 99))
    t.sync()
    assert t.frames(13, None, None, None, 5, False)["frames"][0]["line"] == "[#13 terminal:a] typed `make 99⏎`"
    t.close()
    lines = (tmp_path / "frames.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, 14))


def test_checkpoints_restore_the_index_and_counts(tmp_path: Path) -> None:
    t = Timeline(tmp_path)
    fill(t, 90, ("terminal:a", "page:b"), fail_every=4)  # 270 frames: two checkpoints
    expected = t.context(2500, None, None)
    counts = t.store.counts("r:page:b", 5, 260)
    t.close()
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["00000000.json", "00000001.json"]
    again = Timeline(tmp_path)
    try:
        assert again.store.last_seq == 270 and again.store.counts("r:page:b", 5, 260) == counts
        assert again.context(2500, None, None) == expected
        manual = sum(1 for m in again.store.metas[4:260] if m.resource == "page:b" and m.category == "command")
        assert counts["command"] == manual
    finally:
        again.close()


def test_compression_summarises_old_blocks_once_and_rendering_uses_them(timeline: Timeline) -> None:
    fill(timeline, 200, fail_every=9)  # 600 frames
    compressor = Compressor(timeline, protect=3 * BLOCK, threshold=100)
    assert compressor.candidates() == [2, 1, 0]
    assert asyncio.run(compressor.run_once()) == 3
    assert asyncio.run(compressor.run_once()) == 0 and compressor.candidates() == []
    records = timeline.summaries.records()
    assert [(r["from"], r["to"]) for r in records] == [(1, 100), (101, 200), (201, 300)]
    assert "`make 0` → 2 in /src" in records[0]["text"] and "last failure" in records[0]["text"]
    context = timeline.context(4000, None, None)
    summarised = context["metadata"]["summarised"]
    assert summarised and all(s["to"] - s["from"] == BLOCK - 1 for s in summarised)
    for s in summarised:
        assert context["messages"][s["message"]]["source_frames"] == {"from": s["from"], "to": s["to"]}
    assert covered(context) == list(range(1, 601))


def test_a_restart_in_the_middle_of_compression(tmp_path: Path) -> None:
    t = Timeline(tmp_path)
    fill(t, 200)
    compressor = Compressor(t, protect=3 * BLOCK, threshold=100)
    compressor.compress(2)
    t.close()
    with open(tmp_path / "summaries.jsonl", "ab") as f:  # the crash: block 1's record half written
        f.write(b'{"from": 101, "to": 200, "hash": "')
    t = Timeline(tmp_path)
    try:
        assert t.summaries.blocks() == [2]
        compressor = Compressor(t, protect=3 * BLOCK, threshold=100)
        assert compressor.candidates() == [1, 0]
        asyncio.run(compressor.run_once())
        records = [json.loads(line) for line in (tmp_path / "summaries.jsonl").read_bytes().splitlines()[::1]
                   if line.endswith(b"}")]  # fmt: skip
        assert sorted((r["from"], r["to"]) for r in records) == [(1, 100), (101, 200), (201, 300)]
    finally:
        t.close()


class _Chat(BaseHTTPRequestHandler):
    asked: ClassVar[list[dict[str, Any]]] = []
    fail = False

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).asked.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if type(self).fail:
            self.send_error(500)
            return
        answer = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Built it; make 3 failed."}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(answer.encode())

    def log_message(self, *args: object) -> None:
        pass


def test_an_openai_compatible_summariser_and_its_fallback(timeline: Timeline) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        fill(timeline, 200)
        chat = ChatSummarizer(f"http://127.0.0.1:{server.server_address[1]}/v1", "small", "k1", timeout_s=5)
        compressor = Compressor(timeline, chat, protect=3 * BLOCK, threshold=100)
        record = compressor.compress(0)
        assert record is not None and record["method"] == "model:small" and "make 3 failed" in record["text"]
        asked = _Chat.asked[-1]
        assert asked["path"] == "/v1/chat/completions" and asked["auth"] == "Bearer k1"
        assert asked["body"]["model"] == "small" and "[#1 terminal:a]" in asked["body"]["messages"][1]["content"]
        _Chat.fail = True
        record = compressor.compress(1)
        assert record is not None and record["method"] == "deterministic" and "`make 66` → 0" in record["text"]
    finally:
        _Chat.fail = False
        server.shutdown()
        server.server_close()


def test_line_diff() -> None:
    assert line_diff("a\nb", "a\nb", "#1") == "unchanged since #1"
    diff = line_diff("a\nb\nc", "a\nB\nc\nd", "#4")
    assert diff == "changed since #4 (+2 -1 lines):\n@@ line 2\n- b\n+ B\n@@ line 4\n+ d"
