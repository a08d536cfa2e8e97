"""Answers of the daemon's HTTP API, checked: the JSON of a success, the message of an error."""
from __future__ import annotations

from typing import Any

import httpx


def ok_json(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    """The JSON body of an answer that must have `status`."""
    assert response.status_code == status, response.text
    return response.json()


def error_message(response: httpx.Response, status: int) -> str:
    """The `error.message` of an answer that must have `status`."""
    assert response.status_code == status, response.text
    return response.json()["error"]["message"]
