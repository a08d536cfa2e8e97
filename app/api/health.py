"""GET /healthz: the one route without a token."""

from __future__ import annotations

from fastapi import APIRouter

from app import __version__
from app.api.responses import JSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> JSONResponse:
    return JSONResponse({"ok": True, "version": __version__})
