"""Observations, for every domain that keeps them, and the one check of whether an observation still holds.

An observation is stored as `<root>/<folder of the resource>/observations/<obs_id>.json` (its record: how
its image maps to the resource, as a scale, or the text it showed) beside its files (`<obs_id>.png`,
`.jpeg`, `.xml`); each resource's latest one is also kept in memory. Reading never creates a directory:
only a saved observation does.

An observation can be used later (a tap at its image coordinates, a click on one of its refs, a UI dump
joining its screenshot) only while it still shows the resource: `staleness` says why not, from what it
saw (`Seen`) and what holds now, in one wording for every domain ("the screen was 1080x2400 at rotation 0
and is now 2400x1080 at rotation 1").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lookout.core.archive import ArchivePart
from lookout.core.errors import NotFound
from lookout.core.ids import check_id, new_id
from lookout.core.private_files import make_dir
from lookout.core.storage import atomic_write_bytes, atomic_write_json, read_json

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Seen:
    """What an observation saw that its later use depends on: when it was taken, and named facts as text
    (`{"the screen": "1080x2400 at rotation 0"}`)."""

    at: float
    facts: Mapping[str, str] = field(default_factory=dict)


def staleness(
    seen: Seen, now: float, facts_now: Mapping[str, str] | None = None, *, since: Mapping[str, float] | None = None,
    max_age_s: float | None = None, purpose: str = "",
) -> str | None:  # fmt: skip
    """Why the observation that saw `seen` no longer shows its resource, or None while it does: it is older
    than `max_age_s` (at most that `purpose`), something in `since` (what happened -> when) happened after
    it, or one of its facts differs from `facts_now`."""
    age = now - seen.at
    if max_age_s is not None and age > max_age_s:
        return f"it is {age:.0f} s old (at most {max_age_s:g} s {purpose})"
    for what, when in (since or {}).items():
        if when > seen.at:
            return f"{what} since"
    for name, was in seen.facts.items():
        if facts_now is not None and name in facts_now and facts_now[name] != was:
            return f"{name} was {was} and is now {facts_now[name]}"
    return None


class ObservationStore:
    """The observations of one kind of resource (`kind`: "device", "page") under `root`, one folder per
    resource (`folder` turns its key into a safe directory name). Thread-safe."""

    def __init__(self, root: Path, kind: str, folder: Callable[[str], str], time_field: str) -> None:
        self.root, self.kind, self._folder, self._time_field = root, kind, folder, time_field
        self._latest: dict[str, Record] = {}
        self._lock = threading.Lock()

    @staticmethod
    def new_id() -> str:
        return new_id("o")

    def resource_dir(self, key: str, *, create: bool = False) -> Path:
        """The resource's own folder (its observations are in `observations/` inside it)."""
        path = self.root / self._folder(key)
        if create:
            make_dir(path)
        return path

    def dir(self, key: str, *, create: bool = False) -> Path:
        path = self.resource_dir(key) / "observations"
        if create:
            make_dir(path)
        return path

    def file(self, key: str, obs_id: str, suffix: str) -> Path:
        """Where a file of the observation is (`suffix`: png, jpeg, xml)."""
        return self.dir(key) / f"{check_id(obs_id, 'observation')}.{suffix}"

    def archive_parts(self, key: str, obs_id: str) -> list[ArchivePart]:
        """The observation's files, named as they are under the data dir (for a replay archive)."""
        folder = self.dir(key)
        prefix = f"{self.root.name}/{self._folder(key)}/observations"
        check_id(obs_id, "observation")
        return [ArchivePart(f"{prefix}/{path.name}", path) for path in sorted(folder.glob(f"{obs_id}.*"))
                if path.is_file() and not path.is_symlink()]  # fmt: skip

    def save(self, key: str, record: Record, files: Mapping[str, bytes] | None = None) -> Record:
        """Store the record (it has `obs_id` and the time field) after its files; it becomes the resource's
        latest unless a newer one is already stored."""
        folder = self.dir(key, create=True)
        obs_id = record["obs_id"]
        for suffix, data in (files or {}).items():
            atomic_write_bytes(folder / f"{obs_id}.{suffix}", data)
        atomic_write_json(folder / f"{obs_id}.json", record)
        with self._lock:
            latest = self._latest.get(key)
            if latest is None or latest[self._time_field] <= record[self._time_field]:
                self._latest[key] = record
        return record

    def load(self, key: str, obs_id: str) -> Record:
        check_id(obs_id, "observation")
        try:
            record: Record = read_json(self.dir(key) / f"{obs_id}.json")
        except FileNotFoundError:
            raise NotFound(f"no observation {obs_id!r} of {self.kind} {key!r}") from None
        return record

    def records(self, key: str) -> list[Record]:
        """Every stored observation of the resource (also from an earlier run), oldest first."""
        folder = self.dir(key)
        found = [read_json(path) for path in folder.glob("o_*.json")] if folder.is_dir() else []
        return sorted(found, key=lambda record: record[self._time_field])

    def latest(self, key: str, accept: Callable[[Record], bool] | None = None) -> Record | None:
        """The resource's newest observation (the newest that `accept` takes, when given)."""
        with self._lock:
            latest = self._latest.get(key)
        if latest is not None and (accept is None or accept(latest)):
            return latest
        found = [record for record in self.records(key) if accept is None or accept(record)]
        return found[-1] if found else None

    def forget(self, key: str) -> None:
        """Drop the resource's latest observation from memory (a closed page's; its files stay)."""
        with self._lock:
            self._latest.pop(key, None)
