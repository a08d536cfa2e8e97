"""Which `Host` and `Origin` headers a request may carry, against DNS rebinding (as Jupyter server does).

A page on evil.example whose name is re-pointed at 127.0.0.1 talks to lookout as "same origin", but its
requests still say `Host: evil.example`: lookout answers only requests addressed to a loopback name or
address, or to a name the operator listed (`LOOKOUT_ALLOWED_HOSTS`). A browser request that carries an
`Origin` must come from lookout's own origin (its scheme and the request's `Host`)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost"})


def host_name(host: str) -> str:
    """`host` (a Host header or a netloc) without its port, brackets, trailing dot or case."""
    host = host.strip().lower()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def normalized_hosts(allowed: tuple[str, ...] | list[str]) -> frozenset[str]:
    return frozenset(host_name(h) for h in allowed if h.strip())


def host_allowed(host: str | None, allowed: frozenset[str]) -> bool:
    """Whether a request addressed to `host` (its Host header) may be answered."""
    if not host:
        return False
    name = host_name(host)
    if name in LOOPBACK_NAMES or name in allowed:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None, host: str) -> bool:
    """Whether an `Origin` header names lookout's own origin (`http(s)://<Host>`); no Origin (not a browser, or
    a browser's same-origin GET) is fine, `null` (a sandboxed or file:// page) is not."""
    if origin is None:
        return True
    parts = urlsplit(origin.strip())
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()
