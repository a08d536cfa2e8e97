"""A screenshot answer as MCP content: the image itself, then its description without what only the daemon's
host can use (the file's path, its URL, the image data again)."""

from __future__ import annotations

import base64
import json
from typing import Any

from mcp.server.mcpserver import Image

HOST_ONLY = ("image_b64", "path", "url", "format")


def image_result(answer: str) -> list[Any]:
    """The daemon's inline screenshot answer (JSON with `image_b64` and `format`) as [image, description]."""
    result = json.loads(answer)
    image = Image(data=base64.b64decode(result["image_b64"]), format=result["format"])
    described = {key: value for key, value in result.items() if key not in HOST_ONLY and value is not False}
    return [image, json.dumps(described, separators=(",", ":"), ensure_ascii=False)]
