"""JSON responses rendered with orjson, and the error body every failure uses."""
from __future__ import annotations

from typing import Any

from fastapi.responses import Response

from app.core.storage import dumps


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


def error_response(status: int, code: str, message: str, **details: Any) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = details
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": body}, status_code=status, headers=headers)
