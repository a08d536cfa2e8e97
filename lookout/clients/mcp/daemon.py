"""The tools' one way to the daemon: an HTTP request to lookout's REST API whose failures become tool errors.

The daemon's own MCP endpoint (`/mcp`) gives its server a link that calls the daemon in process. The stdio
shim takes where the daemon is and how to reach it from the environment at every call, so a daemon started
or a token rotated after the MCP client started the shim is picked up; the token file is read again only
when it changed (its lstat differs), and calls share one HTTP client per event loop and address, whose kept
connections a restarted daemon closes after an answer (lookout.api.handover), so the next call connects anew
(a client per call cost ~30 ms: notes/browser.md). Idle connections are dropped sooner than uvicorn closes
them (KEEPALIVE_S), so a call never goes out on a connection the daemon is closing:

- `LOOKOUT_URL`: the daemon's base URL (default http://127.0.0.1:8765);
- `LOOKOUT_TOKEN`: the API token; when unset, the token file of the local data dir (`LOOKOUT_DATA_DIR`,
  else the daemon's default data dir), as `lookout serve` writes it;
- `LOOKOUT_AGENT`: sent as `X-Lookout-Agent` (default: the name the MCP client gave when it connected).
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from lookout.config import default_data_dir
from lookout.core.auth_token import read_token, token_path

DEFAULT_URL = "http://127.0.0.1:8765"
REQUEST_TIMEOUT_S = 30.0
"""For the answer to a request, on top of the time the request itself asks the daemon to wait."""
CONNECT_TIMEOUT_S = 5.0
AGENT_HEADER = "X-Lookout-Agent"
KEEPALIVE_S = 2.0
"""How long the shim keeps an idle connection: under uvicorn's keep-alive timeout (5 s)."""


@dataclass(frozen=True, slots=True)
class DaemonLink:
    """How tools reach the daemon: its base URL, its token, and the transport (None: the network)."""

    url: str
    token: str | None
    transport: httpx.AsyncBaseTransport | None = None


LINK_ATTRIBUTE = "lookout_link"
"""An MCP server carrying a `Callable[[], DaemonLink]` under this name sends its tools' requests through it."""


def environment_link() -> DaemonLink:
    """The stdio shim's link: `LOOKOUT_URL` and `LOOKOUT_TOKEN` (or the token file), read now."""
    return DaemonLink(daemon_url(), daemon_token())


def daemon_url() -> str:
    return os.environ.get("LOOKOUT_URL", DEFAULT_URL).rstrip("/")


def token_file() -> Path:
    data_dir = os.environ.get("LOOKOUT_DATA_DIR")
    return token_path(Path(data_dir) if data_dir else default_data_dir())


_read: dict[Path, tuple[tuple[int, ...], str | None]] = {}
"""Token files read: path -> (what lstat said of it then, the token)."""


def daemon_token() -> str | None:
    """`LOOKOUT_TOKEN`, else the local daemon's token file (read again only when its lstat changed: its inode,
    size, time, mode or owner); None when neither is there."""
    configured = os.environ.get("LOOKOUT_TOKEN")
    if configured:
        return configured
    path = token_file()
    try:
        st = os.lstat(path)
        seen: tuple[int, ...] = (
            st.st_ino,
            st.st_dev,
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_mode,
            st.st_uid,
        )
    except OSError:
        seen = ()
    known = _read.get(path)
    if known is not None and known[0] == seen and seen:
        return known[1]
    try:
        token = read_token(path) or None
    except OSError:  # unreadable, or refused as someone else's or open to others (UnsafePath)
        token = None
    _read[path] = (seen, token)
    return token


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, object], httpx.AsyncClient]]
_clients = weakref.WeakKeyDictionary()


def client_for(link: DaemonLink) -> httpx.AsyncClient:
    """The HTTP client the calls of this event loop share for `link`'s address and transport."""
    kept = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (link.url, link.transport)
    client = kept.get(key)
    if client is None or client.is_closed:
        limits = httpx.Limits(keepalive_expiry=KEEPALIVE_S)
        client = kept[key] = httpx.AsyncClient(base_url=link.url, transport=link.transport, limits=limits)
    return client


def agent_name(ctx: Context) -> str:
    """`LOOKOUT_AGENT`; over HTTP, the `X-Lookout-Agent` header or `?agent=` of the request to `/mcp` (the
    endpoint is stateless: the client's name from its initialize request is not kept); else the MCP client's
    name (stdio); else "mcp"."""
    configured = os.environ.get("LOOKOUT_AGENT")
    if configured:
        return configured
    request = getattr(ctx.request_context, "request", None)
    if request is not None and hasattr(request, "headers"):
        named = request.headers.get(AGENT_HEADER) or request.query_params.get("agent")
        if named:
            return str(named)
    params = ctx.session.client_params
    return params.client_info.name if params is not None and params.client_info.name else "mcp"


async def call(
    ctx: Context,
    method: str,
    path: str,
    *,
    body: Mapping[str, Any] | list[Any] | None = None,
    params: Mapping[str, Any] | None = None,
    wait_s: float = 0.0,
) -> str:
    """One request to the daemon; returns the body of a 2xx answer as the daemon sent it (compact JSON, or
    text for a text view). Fields of `body` and `params` that are None are left out, so the daemon's
    defaults apply. `wait_s` is how long the request asks the daemon to wait before it answers.

    Raises ToolError with the daemon's own message for an error answer, and with how to start lookout when
    nothing listens at `LOOKOUT_URL`."""
    link_of: Callable[[], DaemonLink] = getattr(ctx.mcp_server, LINK_ATTRIBUTE, environment_link)
    link = link_of()
    url, token = link.url, link.token
    headers = {AGENT_HEADER: agent_name(ctx)}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    timeout = httpx.Timeout(REQUEST_TIMEOUT_S + wait_s, connect=CONNECT_TIMEOUT_S)
    json = without_none(body) if isinstance(body, Mapping) else body  # a list: input steps
    try:
        response = await client_for(link).request(
            method, path, json=json, params=without_none(params or {}), headers=headers, timeout=timeout
        )
    except httpx.ConnectError as exc:
        raise ToolError(not_running_message(url)) from exc
    except httpx.TimeoutException as exc:
        raise ToolError(f"lookout at {url} did not answer {method} {path} in time ({type(exc).__name__})") from exc
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise ToolError(cut_message(url, method, path)) from exc
    except httpx.HTTPError as exc:
        raise ToolError(f"request to lookout at {url} failed: {type(exc).__name__}: {exc}") from exc
    if response.is_error:
        raise ToolError(error_message(response, token is not None))
    return response.text


def without_none(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def cut_message(url: str, method: str, path: str) -> str:
    return (
        f"lookout at {url} went away while it served {method} {path} (a restart?): whether it took effect is "
        "not known. The next call reaches the daemon again by itself; observe (read the screen, snapshot the "
        "page) before you repeat an action. A wait can be repeated with the cursor it started from."
    )


def not_running_message(url: str) -> str:
    return (
        f"lookout is not running at {url} (nothing accepted the connection). Start the daemon with "
        "`lookout serve` (in a lookout checkout: `make run`; with Docker: `docker compose up -d`), "
        "or set LOOKOUT_URL to where it listens."
    )


def error_message(response: httpx.Response, sent_token: bool) -> str:
    """The daemon's `{"error": {"code", "message"}}` as one line; a hint on where the token comes from for
    a 401."""
    try:
        error = response.json()["error"]
        text = f"{error['message']} (HTTP {response.status_code} {error['code']})"
    except (ValueError, KeyError, TypeError):
        text = f"HTTP {response.status_code}: {response.text[:500]}"
    if response.status_code == 401:
        source = "LOOKOUT_TOKEN" if os.environ.get("LOOKOUT_TOKEN") else f"the token file {token_file()}"
        given = f"the token sent came from {source}" if sent_token else f"no token was found in {source}"
        if not sent_token and not os.environ.get("LOOKOUT_TOKEN"):
            try:
                read_token(token_file())
            except OSError as exc:  # the file is there but refused: say why
                given += f" ({exc})"
        text += f"; {given}. Set LOOKOUT_TOKEN to the daemon's token (`lookout token` prints it)."
    return text
