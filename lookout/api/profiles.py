"""HTTP adapter for browser profiles (lookout.browser.profiles): list, delete, and their storage state as
Playwright's JSON, exported and imported (a login made once, handed to another daemon)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from lookout.api.responses import JSONResponse
from lookout.browser.profiles import check_name
from lookout.browser.registry import PageRegistry

# served under its prefix in lookout.server.INCLUDED_ON_FIRST_USE, included on first use
router = APIRouter(tags=["pages"])


def _registry(request: Request) -> PageRegistry:
    return request.app.state.pages


@router.get("")
async def list_profiles(request: Request) -> JSONResponse:
    return JSONResponse({"profiles": await _registry(request).profiles_listed()})


@router.delete("/{name}")
async def delete_profile(name: str, request: Request) -> JSONResponse:
    await _registry(request).delete_profile(name)
    return JSONResponse({"name": name, "deleted": True})


@router.get("/{name}/storage")
async def export_storage(name: str, request: Request) -> JSONResponse:
    """The profile's cookies, localStorage and IndexedDB as Playwright's storage-state JSON."""
    return JSONResponse(await _registry(request).profiles.storage(check_name(name)))


@router.put("/{name}/storage")
async def import_storage(name: str, request: Request, state: Annotated[dict[str, Any], Body()]) -> JSONResponse:
    """Replace the profile's storage with a Playwright storage state (the profile is made if missing)."""
    taken = await _registry(request).profiles.set_storage(check_name(name), state)
    return JSONResponse({"name": name, **taken})
