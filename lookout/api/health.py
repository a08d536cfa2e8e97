"""GET /healthz: the one route without a token."""

from __future__ import annotations

import os

from fastapi import APIRouter

from lookout import __version__
from lookout.api.responses import JSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> JSONResponse:
    """Also the daemon's pid: which process answers, across a `lookout restart`."""
    return JSONResponse({"ok": True, "version": __version__, "pid": os.getpid()})
