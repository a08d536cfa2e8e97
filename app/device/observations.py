"""Observations of devices, stored under `<data>/devices/<serial>/observations/<obs_id>.{json,png,xml}`.

An observation remembers how its image maps to the device (the scale, the device's size, rotation and
focused window at capture time) and, once the UI was dumped for it, the dump itself: taps and UI bounds
are converted with the numbers of the observation they name, and element indices stay those of that dump.
A dump joins an earlier screenshot only while that screenshot still shows the screen (`join_refusal`).
Reading never creates a device's directory: only a saved observation or record does.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from app.core.errors import NotFound
from app.core.ids import check_id, new_id
from app.core.private_files import make_dir, read_bytes
from app.core.scaling import Scale
from app.core.storage import append_jsonl, atomic_write_bytes, atomic_write_json, read_json
from app.device.ui_tree import UiNode, parse_hierarchy

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_CACHED_DUMPS = 8
UI_JOIN_MAX_AGE_S = 5.0
"""A UI dump joins a screenshot at most this many seconds old: past that the screen may have moved on."""


def serial_dir_name(serial: str) -> str:
    """A file name for a serial (`127.0.0.1:5555` -> `127.0.0.1_5555-<hash>`), distinct for distinct serials."""
    safe = _UNSAFE.sub("_", serial)[:64]
    if safe != serial or safe.startswith("."):
        safe = f"{safe}-{hashlib.sha1(serial.encode()).hexdigest()[:8]}"
    return safe


@dataclass(frozen=True, slots=True)
class Observation:
    obs_id: str
    serial: str
    created_at: float
    rotation: int
    scale: Scale
    image_format: str | None = None
    """The stored image's format; None for an observation made by a UI dump alone."""
    black: bool = False
    ui_dumped_at: float | None = None
    window: str | None = None
    """The focused window (`package/activity`) when it was taken."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observation:
        return cls(**{**data, "scale": Scale(**data["scale"])})

    @property
    def device(self) -> dict[str, int]:
        return {"width": self.scale.device_width, "height": self.scale.device_height, "rotation": self.rotation}

    @property
    def image(self) -> dict[str, int]:
        return {"width": self.scale.image_width, "height": self.scale.image_height}


class ObservationStore:
    """Observations and action records of every device, on disk, with the latest one per device in memory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._latest: dict[str, Observation] = {}
        self._dumps: dict[tuple[str, str], list[UiNode]] = {}
        self._lock = threading.Lock()

    def new(self, serial: str, scale: Scale, rotation: int, **fields: Any) -> Observation:
        return Observation(new_id("o"), serial, time.time(), rotation, scale, **fields)

    def dir(self, serial: str, *, create: bool = False) -> Path:
        path = self.root / serial_dir_name(serial) / "observations"
        if create:
            make_dir(path)
        return path

    def save(self, obs: Observation, image: bytes | None = None, ui_xml: bytes | None = None) -> Observation:
        """Store the observation with its image and UI dump; it becomes the device's latest."""
        folder = self.dir(obs.serial, create=True)
        if image is not None:
            atomic_write_bytes(folder / f"{obs.obs_id}.{obs.image_format}", image)
        if ui_xml is not None:
            atomic_write_bytes(folder / f"{obs.obs_id}.xml", ui_xml)
            obs = replace(obs, ui_dumped_at=obs.ui_dumped_at or time.time())
        atomic_write_json(folder / f"{obs.obs_id}.json", obs.to_json())
        with self._lock:
            latest = self._latest.get(obs.serial)
            if latest is None or latest.created_at <= obs.created_at:
                self._latest[obs.serial] = obs
        return obs

    def attach_ui(self, obs: Observation, ui_xml: bytes) -> Observation:
        """Give an observation that has no UI dump yet its dump (then it never changes)."""
        return self.save(replace(obs, ui_dumped_at=time.time()), ui_xml=ui_xml)

    def get(self, serial: str, obs_id: str) -> Observation:
        check_id(obs_id, "observation")
        path = self.dir(serial) / f"{obs_id}.json"
        try:
            return Observation.from_json(read_json(path))
        except FileNotFoundError:
            raise NotFound(f"no observation {obs_id!r} of device {serial!r}") from None

    def latest(self, serial: str, with_ui: bool = False) -> Observation | None:
        """The device's newest observation (with a UI dump, when asked), also from an earlier run."""
        with self._lock:
            latest = self._latest.get(serial)
        if latest is not None and (latest.ui_dumped_at or not with_ui):
            return latest
        folder = self.dir(serial)
        found = [Observation.from_json(read_json(p)) for p in folder.glob("o_*.json")] if folder.is_dir() else []
        found = [obs for obs in found if obs.ui_dumped_at or not with_ui]
        return max(found, key=lambda obs: obs.created_at, default=None)

    def image_path(self, obs: Observation) -> Path:
        if obs.image_format is None:
            raise NotFound(f"observation {obs.obs_id!r} has no image (it was made by a UI dump)")
        return self.dir(obs.serial) / f"{obs.obs_id}.{obs.image_format}"

    def ui_nodes(self, obs: Observation) -> list[UiNode] | None:
        """The parsed UI dump of an observation, None when it has none."""
        if obs.ui_dumped_at is None:
            return None
        key = (obs.serial, obs.obs_id)
        with self._lock:
            nodes = self._dumps.get(key)
        if nodes is None:
            nodes = parse_hierarchy(read_bytes(self.dir(obs.serial) / f"{obs.obs_id}.xml"))
            with self._lock:
                if len(self._dumps) >= _CACHED_DUMPS:
                    self._dumps.pop(next(iter(self._dumps)))
                self._dumps[key] = nodes
        return nodes

    def record(self, serial: str, entry: dict[str, Any]) -> None:
        """Append an action or observation record to the device's `actions.jsonl`."""
        folder = self.root / serial_dir_name(serial)
        make_dir(folder)
        append_jsonl(folder / "actions.jsonl", entry)


def join_refusal(obs: Observation, now: float, screen: tuple[int, int, int, str | None] | None = None) -> str | None:
    """Why a UI dump taken `now` must not join `obs`, or None when it may: the screenshot is too old, or
    the device, as `screen` (width, height, rotation, focused window) says it is now, is not as it was."""
    age = now - obs.created_at
    if age > UI_JOIN_MAX_AGE_S:
        return f"it is {age:.0f} s old (a dump joins a screenshot at most {UI_JOIN_MAX_AGE_S:g} s old)"
    if screen is None:
        return None
    width, height, rotation, window = screen
    was = (obs.scale.device_width, obs.scale.device_height, obs.rotation)
    if was != (width, height, rotation):
        return (f"the screen was {was[0]}x{was[1]} at rotation {was[2]} and is now {width}x{height} at "
                f"rotation {rotation}")  # fmt: skip
    if obs.window != window:
        return f"the focused window was {obs.window or 'none'} and is now {window or 'none'}"
    return None
