"""HTTP adapter for leases (lookout.core.leases), the same three routes on terminals and pages:
`GET|POST|DELETE /{id}/lease`: read, take or renew (body `{duration_s}`), let go."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request

from lookout.api.responses import JSONResponse
from lookout.core.leases import Holdable, Lease
from lookout.schemas.common import LeaseRequest
from lookout.timeline.recording import current_agent


def add_lease_routes(router: APIRouter, kind: str, find: Callable[[Request, str], Awaitable[Holdable]]) -> None:
    """`find(request, id)`: the resource (404 when unknown), awaited (a terminal let go is built again)."""

    @router.get("/{resource_id}/lease", name=f"read_{kind}_lease")
    async def read_lease(resource_id: str, request: Request) -> JSONResponse:
        """The lease held on it now, or null."""
        return JSONResponse({"lease": (await find(request, resource_id)).lease()})

    @router.post("/{resource_id}/lease", name=f"take_{kind}_lease")
    async def take_lease(resource_id: str, body: LeaseRequest, request: Request) -> JSONResponse:
        """Hold it for `duration_s` seconds (1 to 3600), or renew your lease; 409 while another hand holds it."""
        lease, renewed = (await find(request, resource_id)).hold(current_agent.get(), body.duration_s)
        return JSONResponse({"lease": _shown(lease), "renewed": renewed})

    @router.delete("/{resource_id}/lease", name=f"let_go_{kind}_lease")
    async def let_go_lease(resource_id: str, request: Request) -> JSONResponse:
        """Let your lease go; 404 when none is held, 409 when another hand holds it."""
        return JSONResponse({"let_go": _shown((await find(request, resource_id)).let_go(current_agent.get()))})


def _shown(lease: Lease) -> dict[str, Any]:
    return lease.to_json(time.time())
