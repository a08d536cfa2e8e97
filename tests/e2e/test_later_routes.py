"""The API of devices and of pages is included on first use (lookout.api.later_routes): the daemon starts without
building it, and no request ever meets it missing: the first request under a prefix, the OpenAPI document, a
wrong method and two first requests at once are all answered as if every route had been there from the start."""

from __future__ import annotations

import asyncio

import httpx
from fastapi.testclient import TestClient

from tests.conftest import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _prefixes(client: TestClient) -> list[str]:
    """The prefix of every router included into the app (FastAPI keeps it with the router)."""
    return [route.include_context.prefix for route in client.app.routes  # type: ignore[attr-defined]
            if hasattr(route, "include_context")]  # fmt: skip


def _included(client: TestClient) -> set[str]:
    return {"/v1/devices", "/v1/pages", "/v1/profiles"}.intersection(_prefixes(client))


def test_the_first_request_under_a_prefix_is_routed_to_routes_included_for_it(app_api: TestClient) -> None:
    assert _included(app_api) == set()
    profiles = app_api.get("/v1/profiles")
    assert profiles.status_code == 200 and isinstance(profiles.json()["profiles"], list), profiles.text
    assert _included(app_api) == {"/v1/profiles"}  # only what the request needed
    missing = app_api.get("/v1/pages/p-none")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found", missing.text
    wrong = app_api.put("/v1/devices")
    assert wrong.status_code == 405 and "GET" in wrong.headers["allow"], wrong.text
    assert _included(app_api) == {"/v1/profiles", "/v1/pages", "/v1/devices"}
    assert app_api.get("/v1/devicesX").status_code == 404  # a prefix is a path segment, not a string's start


def test_the_openapi_document_holds_every_route_before_any_was_used(app_api: TestClient) -> None:
    paths = app_api.get("/openapi.json").json()["paths"]
    assert {"/v1/devices", "/v1/devices/{serial}/tap", "/v1/pages", "/v1/pages/{page_id}/action",
            "/v1/profiles", "/v1/terminals"} <= set(paths)  # fmt: skip


def test_two_first_requests_at_once_are_both_answered(app_api: TestClient) -> None:
    async def both() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app_api.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=AUTH) as client:
            return list(await asyncio.gather(*(client.get("/v1/pages") for _ in range(4))))

    answers = asyncio.run(both())
    assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
    assert _prefixes(app_api).count("/v1/pages") == 1  # included once
