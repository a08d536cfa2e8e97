"""The request guard for JSON bodies: lone surrogates refused, a JSON body without the JSON content type read
as JSON (curl -d sends application/x-www-form-urlencoded)."""
from __future__ import annotations

import httpx
from fastapi import FastAPI
from pydantic import BaseModel

from lookout.api.text_guard import TextGuard


class Body(BaseModel):
    url: str


def _app() -> FastAPI:
    app = FastAPI()

    @app.post("/echo")
    async def echo(body: Body) -> dict[str, str]:
        return {"url": body.url}

    app.add_middleware(TextGuard)
    return app


async def _post(content: str, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=_app()), base_url="http://test") as client:
        return await client.post("/echo", content=content.encode(), headers=headers)


async def test_a_json_body_without_the_json_content_type_is_read_as_json() -> None:
    for headers in ({}, {"Content-Type": "application/x-www-form-urlencoded"}, {"Content-Type": "text/plain"},
                    {"Content-Type": "application/json"}):  # fmt: skip
        answer = await _post('{"url": "about:blank"}', headers)
        assert (answer.status_code, answer.json()) == (200, {"url": "about:blank"}), headers


async def test_lone_surrogates_are_refused_whatever_the_content_type() -> None:
    for headers in ({}, {"Content-Type": "application/x-www-form-urlencoded"}, {"Content-Type": "application/json"}):
        answer = await _post('{"url": "a\\ud800"}', headers)
        assert answer.status_code == 400 and answer.json()["error"]["details"]["field"] == "body.url", headers


async def test_a_body_that_is_not_json_is_left_to_the_route() -> None:
    answer = await _post("url=about:blank", {"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 422
