"""Issue 46, limits counted at admission: a crowd of concurrent opens cannot pass `max_sessions`, a flood of
WebSocket streams cannot pass `max_streams` nor keep `/healthz` from answering. The daemon runs as a
subprocess; the requests are real, concurrent HTTP and WebSocket connections."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import websockets
from websockets.exceptions import InvalidStatus

from tests.conftest import Daemon


def test_200_concurrent_opens_under_a_limit_of_64_leave_at_most_64_running(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data", LOOKOUT_MAX_SESSIONS="64").start()
    try:

        async def crowd() -> list[httpx.Response]:
            headers = {"Authorization": f"Bearer {daemon.token}"}
            limits = httpx.Limits(max_connections=200)
            async with httpx.AsyncClient(base_url=daemon.url, headers=headers, timeout=120, limits=limits) as c:
                body = {"command": ["cat"], "shell_integration": False}
                return await asyncio.gather(*(c.post("/v1/terminals", json=body) for _ in range(200)))

        answers = asyncio.run(crowd())
        created = [a for a in answers if a.status_code == 201]
        refused = [a.json()["error"] for a in answers if a.status_code == 409]
        assert len(created) + len(refused) == 200, {a.status_code for a in answers}
        assert 0 < len(created) <= 64 and refused
        assert all(e["details"] == {"limit": "max_sessions", "value": 64} for e in refused), refused[0]
        assert "LOOKOUT_MAX_SESSIONS=64" in refused[0]["message"]
        with daemon.client() as api:
            running = [t for t in api.get("/v1/terminals").json()["terminals"] if t["status"] == "running"]
        assert len(running) <= 64
    finally:
        daemon.finish()


def test_a_flood_of_streams_is_held_to_the_limit_and_healthz_still_answers(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data", LOOKOUT_MAX_STREAMS="100").start()
    try:
        with daemon.client() as api:
            tid = api.post("/v1/terminals", json={"command": ["cat"], "shell_integration": False}).json()["id"]
        url = f"ws://127.0.0.1:{daemon.port}/v1/terminals/{tid}/stream?mode=raw&token={daemon.token}"

        async def flood() -> tuple[list[object], int]:
            opened: list[websockets.ClientConnection] = []

            async def one() -> object:
                try:
                    ws = await websockets.connect(url, open_timeout=120)
                except InvalidStatus as exc:
                    return exc.response
                opened.append(ws)
                return ws

            streams = [asyncio.create_task(one()) for _ in range(2000)]
            await asyncio.sleep(0.5)  # the flood is under way
            async with httpx.AsyncClient(base_url=daemon.url, timeout=60) as c:
                asked = time.monotonic()
                health = (await c.get("/healthz")).status_code
                print(f"/healthz during the flood of 2,000 handshakes: {time.monotonic() - asked:.2f} s")
            results = await asyncio.gather(*streams, return_exceptions=True)
            await asyncio.gather(*(ws.close() for ws in opened))
            return results, health

        results, health = asyncio.run(flood())
        assert health == 200, "/healthz answered during the flood"
        accepted = [r for r in results if isinstance(r, websockets.ClientConnection)]
        refused = [r for r in results if getattr(r, "status_code", None) == 503]
        late = [r for r in results if getattr(r, "status_code", None) == 408]  # handshakes past the header timeout
        assert 0 < len(accepted) <= 100, len(accepted)
        assert refused and len(accepted) + len(refused) + len(late) == 2000, [
            r for r in results if r not in accepted and r not in refused and r not in late
        ][:3]
        error = json.loads(refused[0].body)["error"]  # type: ignore[attr-defined]
        assert error["code"] == "too_many_streams" and "LOOKOUT_MAX_STREAMS=100" in error["message"]

        async def again() -> str:
            async with websockets.connect(url) as ws:
                return json.loads(await ws.recv())["type"]

        assert asyncio.run(again()) == "hydrate", "every stream closed: the count went back down"
    finally:
        daemon.finish()
