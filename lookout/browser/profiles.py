"""Browser profiles: named, persistent logins under `<data>/profiles/<name>/`.

Pages opened with a profile share one browser context that outlives them and the daemon. With the local
browser a profile is a Chromium user data directory (`chromium/`: cookies, localStorage, IndexedDB and
service workers are Chromium's own files), as Playwright MCP keeps its default profile. With a browser
elsewhere (CDP, a Playwright server), where no directory of ours can be its profile, a profile is its
Playwright storage state (`storage.json`: cookies, localStorage, IndexedDB), applied to a new context and
saved again whenever a page of the profile closes and when the daemon stops.

Names are short and plain (letters, digits, `.`, `_`, `-`; never `..`), so a name is never a path;
directories are 0700 and files 0600, opened without following links (lookout.core.private_files).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookout.core.errors import BadInput, NotFound
from lookout.core.private_files import make_dir
from lookout.core.storage import atomic_write_json, read_json

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
USER_DATA = "chromium"
STORAGE = "storage.json"


def check_name(name: str) -> str:
    """`name` if it can name a profile; BadInput (400) saying why not."""
    shown = repr(name) if len(name) <= 80 else repr(name[:80]) + f"… ({len(name)} characters)"
    if not NAME.fullmatch(name) or ".." in name:
        raise BadInput(f"profile {shown} is not a profile name: 1 to 64 letters, digits, '.', '_' or '-', "
                       "starting with a letter or digit, without '..'", field="profile")  # fmt: skip
    return name


@dataclass(frozen=True, slots=True)
class ProfileInfo:
    name: str
    size_bytes: int
    updated_at: float


class ProfileFiles:
    """The profiles' directories."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def dir(self, name: str, create: bool = False) -> Path:
        folder = self.root / check_name(name)
        if create:
            make_dir(folder)
        elif not folder.is_dir() or folder.is_symlink():
            raise NotFound(f"no profile {name!r} (GET /v1/profiles lists them; a page opened with a profile makes it)")
        return folder

    def user_data(self, name: str) -> Path:
        folder = self.dir(name, create=True) / USER_DATA
        make_dir(folder)
        return folder

    def storage_file(self, name: str) -> Path:
        return self.dir(name, create=True) / STORAGE

    def load_storage(self, name: str) -> dict[str, Any] | None:
        try:
            state = read_json(self.dir(name) / STORAGE)
        except (FileNotFoundError, ValueError, NotFound):
            return None
        return state if isinstance(state, dict) else None

    def save_storage(self, name: str, state: dict[str, Any]) -> None:
        atomic_write_json(self.storage_file(name), state)

    def list(self) -> list[ProfileInfo]:
        found = []
        for folder in sorted(self.root.iterdir()) if self.root.is_dir() else []:
            if folder.is_symlink() or not folder.is_dir() or not NAME.fullmatch(folder.name):
                continue
            size, updated = 0, folder.stat().st_mtime
            for path in folder.rglob("*"):
                try:
                    info = path.lstat()
                except OSError:
                    continue
                if path.is_file() and not path.is_symlink():
                    size += info.st_size
                    updated = max(updated, info.st_mtime)
            found.append(ProfileInfo(folder.name, size, updated))
        return found

    def delete(self, name: str) -> None:
        shutil.rmtree(self.dir(name))


def storage_state(state: Any) -> dict[str, Any]:
    """A Playwright storage state as given to PUT .../storage: {cookies: [...], origins: [...]}; BadInput else."""
    if (
        not isinstance(state, dict)
        or not isinstance(state.get("cookies", []), list)
        or not isinstance(state.get("origins", []), list)
    ):
        raise BadInput('a storage state is Playwright\'s JSON: {"cookies": [...], "origins": [...]}', field="body")
    return {"cookies": state.get("cookies", []), "origins": state.get("origins", [])}
