"""JSON responses rendered with orjson, and the error body every failure uses."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fastapi.responses import JSONResponse as StarletteJSONResponse
from pydantic import BaseModel

from lookout.core.storage import dumps


class JSONResponse(StarletteJSONResponse):
    """JSON via orjson (a JSONResponse, so the OpenAPI schema documents answers as JSON). A lone surrogate
    (which JSON requests can carry, and error messages can echo) is no UTF-8: such content is written with
    ASCII escapes instead, so an answer is never lost to its encoding."""

    def render(self, content: Any) -> bytes:
        try:
            return dumps(content)
        except TypeError:
            return json.dumps(content, separators=(",", ":"), default=str).encode()


def error_response(status: int, code: str, message: str, *, headers: Mapping[str, str] | None = None,
                   **details: Any) -> JSONResponse:  # fmt: skip
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = details
    headers = {**(headers or {}), **({"WWW-Authenticate": "Bearer"} if status == 401 else {})}
    return JSONResponse({"error": body}, status_code=status, headers=headers or None)


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: dict[str, Any] | None = None


class ErrorBody(BaseModel):
    """What every failure answers (documented in the OpenAPI schema for every route)."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "bad input: the message says what and where"),
        (401, "missing or wrong token"),
        (404, "no such resource"),
        (409, "the resource is not in a state for this"),
        (413, "request body too large"),
        (422, "the request does not match its schema"),
        (502, "a backend (adb, uiautomator, Chromium) failed"),
        (503, "a backend is not available"),
        (504, "a backend did not answer in time"),
        (507, "the disk refused a write (full)"),
    )
}
