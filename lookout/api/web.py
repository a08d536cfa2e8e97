"""The web UI: its static files at `/` and `/ui/...`, xterm.js from the npm packages at `/ui/vendor/...`.

These paths need no token (the sign-in page asks for it); they serve only the UI's own files and three
files of xterm.js, never anything else from disk. Without the npm packages, `/` says how to install them.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from lookout.core.errors import NotFound

router = APIRouter(tags=["web"], include_in_schema=False)

VENDOR = {
    "xterm.mjs": "node_modules/@xterm/xterm/lib/xterm.mjs",
    "xterm.css": "node_modules/@xterm/xterm/css/xterm.css",
    "addon-fit.mjs": "node_modules/@xterm/addon-fit/lib/addon-fit.mjs",
}
MEDIA = {".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css",
         ".svg": "image/svg+xml"}  # fmt: skip
MAX_NAME = 200
"""The longest UI file name looked up (the UI's own are far shorter; the file system refuses 255+ a part)."""
HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
PAGE_HEADERS = {
    **HEADERS,
    # only lookout's own scripts, talking only to lookout; xterm.js sets inline styles, images are blob: URLs
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' blob: data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "Referrer-Policy": "no-referrer",
}

MISSING = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>lookout: UI not installed</title>
</head><body><h1>lookout's web UI is not installed</h1>
<p>Its terminal view needs xterm.js, which is installed from npm at set-up time and was not found in
<code>{where}</code>.</p><p>Install it with <code>make run</code> (or <code>cd lookout/web &amp;&amp; npm ci</code>),
then reload this page. The API works without it.</p></body></html>"""


def _web_dir(request: Request) -> Path:
    return request.app.state.settings.web_dir


def _file(path: Path, headers: dict[str, str] = HEADERS) -> FileResponse:
    return FileResponse(path, media_type=MEDIA.get(path.suffix, "application/octet-stream"), headers=headers)


def missing_vendor(web_dir: Path) -> list[str]:
    return [name for name, relative in VENDOR.items() if not (web_dir / relative).is_file()]


@router.get("/")
async def index(request: Request) -> Response:
    web_dir = _web_dir(request)
    if missing_vendor(web_dir):
        return HTMLResponse(MISSING.format(where=web_dir / "node_modules"), status_code=503, headers=HEADERS)
    return _file(web_dir / "index.html", PAGE_HEADERS)


@router.get("/ui/vendor/{name}")
async def vendor(name: str, request: Request) -> FileResponse:
    relative = VENDOR.get(name)
    path = _web_dir(request) / relative if relative else None
    if path is None or not path.is_file():
        raise NotFound(f"no UI vendor file {name!r} (is xterm.js installed? `cd lookout/web && npm ci`)")
    return _file(path)


@router.get("/ui/{name:path}")
async def static(name: str, request: Request) -> FileResponse:
    """The UI's own files: js/*.js, css, nothing outside lookout/web, nothing from node_modules."""
    if len(name) > MAX_NAME or "\x00" in name:
        raise NotFound(f"no UI file {name[:80]!r}")
    root = _web_dir(request).resolve()
    path = (root / name).resolve()
    inside = path.is_relative_to(root) and "node_modules" not in path.relative_to(root).parts
    if not inside or path.suffix not in MEDIA or not path.is_file():
        raise NotFound(f"no UI file {name!r}")
    return _file(path)
