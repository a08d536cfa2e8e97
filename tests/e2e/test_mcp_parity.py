"""What the REST API does, an MCP agent can do too (issue 20, item 3): the SDK's client over stdio against a daemon
subprocess, real headless Chromium on pages served from 127.0.0.1, and the fake adb device."""
from __future__ import annotations

import base64
import io
import json
import re
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.types import CallToolResult
from PIL import Image

from tests.conftest import Daemon
from tests.support.mcp_client import call, shim, tool_text
from tests.support.pages import FORMS, big_page, ref_of
from tests.support.screens import LOGIN_UI
from tests.support.site import serve_directory

HOST_ONLY = ("path", "url", "image_b64", "format", "/v1/", tempfile.gettempdir())
"""What a screenshot's description must not carry: only the daemon's host could use it."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "big.html").write_text(big_page(800))
    (root / "forms.html").write_text(FORMS)
    with serve_directory(root) as url:
        yield url


def _image_and_description(result: CallToolResult) -> tuple[Image.Image, str, dict[str, Any]]:
    assert not result.is_error, result.content
    image, text = result.content
    assert image.type == "image" and text.type == "text"
    return Image.open(io.BytesIO(base64.b64decode(image.data))), image.mime_type, json.loads(text.text)


async def test_a_page_is_found_in_expanded_diffed_acted_on_and_closed(daemon: Daemon, site: str) -> None:
    uploads = daemon.data_dir / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "report.txt").write_text("hello")
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        big = await call(session, "browser_open", url=f"{site}/big.html")
        snap = tool_text(await session.call_tool("browser_snapshot", {"page_id": big["id"], "max_tokens": 1000}))
        assert "Add 799" not in snap
        found = await call(session, "browser_snapshot", page_id=big["id"], find="add 799")
        (match,) = found["matches"]
        row = next(p for p in reversed(match["path"]) if p.startswith("- row"))
        row_ref = row.split("[ref=")[1].split("]")[0]
        expanded = tool_text(await session.call_tool("browser_snapshot", {"page_id": big["id"], "expand": row_ref}))
        assert f"# Expanded: {row_ref}" in expanded and '- button "Add 799"' in expanded

        page = (await call(session, "browser_open", url=f"{site}/forms.html"))["id"]
        first = tool_text(await session.call_tool("browser_snapshot", {"page_id": page}))
        obs_id = re.search(r"^# obs_id: (o_\w+)$", first, re.MULTILINE).group(1)
        told = await call(session, "browser_action", page_id=page, action="dialog", accept=True, text="Ada")
        assert "accepted with 'Ada'" in told["note"]
        asked = await call(session, "browser_action", page_id=page, action="click", ref=ref_of(first, '- button "Name?"'))
        assert asked["effects"]["dialogs"][0]["answer"] == "accepted"
        uploaded = await call(session, "browser_action", page_id=page, action="upload",
                              ref=ref_of(first, '- button "File"'), files=["report.txt"])  # fmt: skip
        assert uploaded["ok"] is True
        diff = tool_text(await session.call_tool("browser_snapshot", {"page_id": page, "since": obs_id}))
        assert diff.splitlines()[1].startswith(f"# Diff against {obs_id}:") and "report.txt" in diff

        shot, mime, described = _image_and_description(await session.call_tool("browser_screenshot", {"page_id": page}))
        assert mime == "image/jpeg" and shot.format == "JPEG" and shot.size == (1000, 562)
        assert set(described) == {"obs_id", "page", "image", "scale_factor", "tokens"}
        assert not any(word in json.dumps(described) for word in HOST_ONLY)

        for page_id in (big["id"], page):
            closed = await session.call_tool("browser_close", {"page_id": page_id})
            assert not closed.is_error, closed.content
        assert (await call(session, "browser_pages"))["pages"] == []
        gone = await session.call_tool("browser_snapshot", {"page_id": page})
        assert gone.is_error and "404" in tool_text(gone)


LOG = [
    "11-24 01:00:00.000  100  100 I ActivityManager: Start proc com.example",
    "11-24 01:00:01.000  200  200 E AndroidRuntime: FATAL EXCEPTION: main",
    "11-24 01:00:02.000  200  201 D Example: tapped",
]


async def test_a_device_app_is_launched_and_stopped_its_log_read_and_its_screen_seen(
    tmp_path: Any, adb_server: Any, make_device: Any
) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_ui(LOGIN_UI)
    fake.set_logcat(LOG)
    daemon = Daemon(tmp_path / "data", LOOKOUT_ADB_PORT=str(adb_server.port)).start()
    try:
        async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
            launched = await call(session, "device_app", serial=serial, package="com.example")
            stopped = await call(session, "device_app", serial=serial, package="com.example", action="stop")
            assert (launched["action"], stopped["action"]) == ("launch", "stop")
            assert [argv[0] for argv in fake.apps()] == ["monkey", "am"] and fake.apps()[1][1] == "force-stop"
            bad = await session.call_tool("device_app", {"serial": serial, "package": "not a package"})
            assert bad.is_error and "not an Android package name" in tool_text(bad)

            errors = await call(session, "device_logcat", serial=serial, level="E")
            assert errors["lines"] == [LOG[1]]
            tagged = await call(session, "device_logcat", serial=serial, tag="Example", lines=5)
            assert tagged["lines"] == [LOG[2]]

            shot, mime, described = _image_and_description(
                await session.call_tool("device_screenshot", {"serial": serial})
            )
            assert mime == "image/jpeg" and shot.format == "JPEG" and shot.size == (450, 1000)
            assert described["ui"]["elements"][0]["text"] == "Log in" and "black" not in described
            assert not any(word in json.dumps(described) for word in HOST_ONLY)
            button = described["ui"]["elements"][0]["index"]
            scripted = await call(session, "device_script", serial=serial, steps=[
                {"action": "app", "package": "com.example"}, {"action": "tap", "element": button}])  # fmt: skip
            assert scripted["ok"] is True and fake.inputs()[-1] == ["tap", "540", "1575"]
    finally:
        daemon.stop()


async def test_history_names_the_extract_tool_and_the_http_api_keeps_its_own_handle(daemon: Daemon) -> None:
    async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
        tid = (await call(session, "terminal_open", command=["bash"], cols=80, rows=12))["id"]
        for n in range(4):
            await call(session, "terminal_act", terminal_id=tid, input={"text": f"echo line-{n}", "keys": ["Enter"]},
                       until={"block_end": True})  # fmt: skip
        history = tool_text(await session.call_tool("context_history", {"budget": 150}))
        handle = re.search(r"context_extract\(from_frame=(\d+), to_frame=(\d+)\)", history)
        assert handle is not None and "/v1/timeline" not in history, history
        extract = tool_text(await session.call_tool(
            "context_extract", {"from_frame": int(handle.group(1)), "to_frame": int(handle.group(2))}))
        assert extract.startswith(f"[#{handle.group(1)} terminal:{tid}]")
        everyone = tool_text(await session.call_tool("context_history", {"budget": 150, "everyone": True}))
        assert re.search(r"context_extract\(from_frame=\d+, to_frame=\d+, everyone=true\)", everyone), everyone
    with daemon.client() as api:
        rendered = api.get("/v1/timeline/context", params={"budget": 150}).json()
    assert any("GET /v1/timeline/extract?from=" in m["content"] for m in rendered["messages"])


async def test_an_argument_a_tool_does_not_take_is_an_error_not_dropped() -> None:
    async with shim(LOOKOUT_URL="http://127.0.0.1:9", LOOKOUT_TOKEN="test-token-0123456789") as session:
        wrong = await session.call_tool("terminal_act", {"terminal_id": "t_0", "text": "ls", "keys": ["Enter"]})
        assert wrong.is_error and "takes no keys, text" in tool_text(wrong) and "input" in tool_text(wrong)
