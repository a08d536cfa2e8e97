"""Every failure becomes `{"error": {"code", "message"}}` with the right status, never a bare 500."""

from __future__ import annotations

import errno
import logging
from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Route, compile_path

from lookout.api.handover import TAKEN_OVER
from lookout.api.responses import JSONResponse, error_response
from lookout.core.errors import LookoutError, TakenOver
from lookout.core.redaction import Scrubber

log = logging.getLogger(__name__)

STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 401: "unauthorized"}


def _where(loc: tuple[object, ...]) -> str:
    return ".".join(str(p) for p in loc if p not in ("body", "query", "path"))


class _Prefixed(Protocol):
    prefix: str


@runtime_checkable
class _IncludedRouter(Protocol):
    """How FastAPI wraps a router included in another (its class for this is private)."""

    original_router: APIRouter
    include_context: _Prefixed


def _methods(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, set[str]]]:
    """(full path, methods) of every HTTP route, also inside included routers (FastAPI wraps them)."""
    for route in routes:
        if isinstance(route, _IncludedRouter):
            yield from _methods(route.original_router.routes, prefix + route.include_context.prefix)
        elif isinstance(route, Route) and route.methods:
            yield prefix + route.path, route.methods


def _allowed(request: Request) -> str:
    """Every method some route takes on this path (a path is often several routes, one per method)."""
    path = request.scope["path"]
    allowed = {m for pattern, methods in _methods(request.app.routes) if compile_path(pattern)[0].match(path)
               for m in methods}  # fmt: skip
    return ", ".join(sorted(allowed))


def install_error_handlers(app: FastAPI, scrubber: Scrubber) -> None:
    """`scrubber` takes the daemon's secrets out of every error message, whatever it quotes (a backend's own
    error text, Playwright's quoting a remote browser's whole address)."""

    @app.exception_handler(LookoutError)
    async def lookout_error(_: Request, exc: LookoutError) -> JSONResponse:
        """A TakenOver answer is marked for the handover middleware, which passes the request on instead."""
        headers = {TAKEN_OVER: "1"} if isinstance(exc, TakenOver) else None
        return error_response(exc.status, exc.code, scrubber.scrub(exc.message), headers=headers, **exc.details)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {"field": _where(tuple(e.get("loc", ()))), "message": e.get("msg", "invalid")} for e in exc.errors()
        ]
        summary = "; ".join(f"{p['field'] or 'body'}: {p['message']}" for p in problems[:5])
        return error_response(422, "validation", summary or "invalid request", problems=problems)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        headers = {**(exc.headers or {}), "Allow": _allowed(request)} if exc.status_code == 405 else exc.headers
        return error_response(exc.status_code, code, str(exc.detail), headers=headers)

    @app.exception_handler(OSError)
    async def os_error(request: Request, exc: OSError) -> JSONResponse:
        """A full disk is a 507 that says so (handled here, the connection stays usable); others are 500s."""
        if exc.errno in STORAGE_ERRNOS:
            log.error("%s %s: the disk refused a write: %s", request.method, request.url.path, exc)
            return error_response(507, "insufficient_storage",
                                  f"the disk refused a write ({exc.strerror}): free space where the data dir is")  # fmt: skip
        return await unexpected(request, exc)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", f"internal error: {type(exc).__name__}")
