"""A page's downloads, kept under `<data>/pages/<id>/downloads/` (0600 files in a 0700 folder) and served by
`GET /v1/pages/{id}/downloads/{name}`. The action's answer says where each went and whether it is saved yet:
the event is recorded when the download starts and its `state` becomes `saved` (or `failed: ...`) when the
file is complete."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookout.browser import playwright_api as pw
from lookout.core.errors import NotFound
from lookout.core.private_files import make_dir

if TYPE_CHECKING:
    from playwright.async_api import Download

_UNSAFE = re.compile(r"[^\w.\- ]", re.ASCII)
_NAME = re.compile(r"^[0-9a-f]{6}-[\w.\- ]{1,120}$", re.ASCII)


def kept_name(suggested: str) -> str:
    """A file name of lookout's for a download the page suggests `suggested` for: unique, with no path in it."""
    base = _UNSAFE.sub("_", suggested.replace("/", "_").replace("\\", "_")).strip(" .")[:120] or "download"
    return f"{secrets.token_hex(3)}-{base}"


def download_path(folder: Path, name: str) -> Path:
    """The kept file `name` in `folder` (a name lookout did not give is not found, never a path elsewhere)."""
    path = folder / name
    if not _NAME.match(name) or not path.is_file():
        raise NotFound(f"no download {name!r} on this page (an action's effects.downloads name them)")
    return path


async def save(download: Download, path: Path, event: dict[str, Any]) -> None:
    """Save the download at `path` and say so in its `event` (`state`)."""
    try:
        make_dir(path.parent)
        await download.save_as(path)
        os.chmod(path, 0o600)
        event["state"] = "saved"
    except (pw.Error, OSError) as exc:
        event["state"] = f"failed: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
