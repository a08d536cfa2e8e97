"""Observations of devices, stored by the shared store (lookout.core.observations) under
`<data>/devices/<serial>/observations/<obs_id>.{json,png,xml,ref.png}`.

An observation remembers how its image maps to the device (the scale, the device's size, rotation and
focused window at capture time) and, once the UI was dumped for it, the dump itself: taps and UI bounds
are converted with the numbers of the observation they name, and element indices stay those of that dump.
A dump joins an earlier screenshot only while that screenshot still shows the screen (`join_refusal`); a
tap or swipe uses one only while the screen has not turned (`turned`): both are the store's staleness check.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from PIL import Image

from lookout.core.errors import NotFound
from lookout.core.observations import ObservationStore as Store
from lookout.core.observations import Seen, staleness
from lookout.core.private_files import read_bytes
from lookout.core.scaling import Scale
from lookout.core.storage import append_jsonl
from lookout.device.ui_tree import UiNode, parse_hierarchy
from lookout.device.verify import decode_reference, encode_reference

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_CACHED = 8
"""Parsed dumps and decoded reference frames kept in memory, each (the newest observations are the used ones)."""
REFERENCE = "ref.png"
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
    reference: bool = False
    """Whether its reference frame is stored (lookout.device.verify): what actions that use it are checked
    against. Observations of lookout before 0.30 have none."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observation:
        return cls(**{**data, "scale": Scale(**data["scale"])})

    def seen(self) -> Seen:
        """What the observation saw, for the staleness check."""
        return Seen(self.created_at, _facts(self.scale.device_width, self.scale.device_height, self.rotation,
                                            self.window))  # fmt: skip

    @property
    def device(self) -> dict[str, int]:
        return {"width": self.scale.device_width, "height": self.scale.device_height, "rotation": self.rotation}

    @property
    def image(self) -> dict[str, int]:
        return {"width": self.scale.image_width, "height": self.scale.image_height}


class DeviceObservations:
    """Observations and action records of every device, on disk (the shared store), with the parsed UI dumps
    and reference frames of the last few cached."""

    def __init__(self, root: Path) -> None:
        self.store = Store(root, "device", serial_dir_name, "created_at")
        self._dumps: dict[tuple[str, str], list[UiNode]] = {}
        self._references: dict[tuple[str, str], Image.Image] = {}
        self._lock = threading.Lock()

    def new(self, serial: str, scale: Scale, rotation: int, **fields: Any) -> Observation:
        return Observation(self.store.new_id(), serial, time.time(), rotation, scale, **fields)

    def save(self, obs: Observation, image: bytes | None = None, ui_xml: bytes | None = None,
             reference: Image.Image | None = None) -> Observation:  # fmt: skip
        """Store the observation with its image, UI dump and reference frame; it becomes the device's latest."""
        files: dict[str, bytes] = {}
        if image is not None:
            files[str(obs.image_format)] = image
        if reference is not None:
            files[REFERENCE] = encode_reference(reference)
            obs = replace(obs, reference=True)
            with self._lock:
                self._remember(self._references, (obs.serial, obs.obs_id), reference)
        if ui_xml is not None:
            files["xml"] = ui_xml
            obs = replace(obs, ui_dumped_at=obs.ui_dumped_at or time.time())
        self.store.save(obs.serial, obs.to_json(), files)
        return obs

    def attach_ui(self, obs: Observation, ui_xml: bytes) -> Observation:
        """Give an observation that has no UI dump yet its dump (then it never changes)."""
        return self.save(replace(obs, ui_dumped_at=time.time()), ui_xml=ui_xml)

    def get(self, serial: str, obs_id: str) -> Observation:
        return Observation.from_json(self.store.load(serial, obs_id))

    def latest(self, serial: str, with_ui: bool = False) -> Observation | None:
        """The device's newest observation (with a UI dump, when asked), also from an earlier run."""
        found = self.store.latest(serial, (lambda record: bool(record["ui_dumped_at"])) if with_ui else None)
        return None if found is None else Observation.from_json(found)

    def image_path(self, obs: Observation) -> Path:
        if obs.image_format is None:
            raise NotFound(f"observation {obs.obs_id!r} has no image (it was made by a UI dump)")
        return self.store.file(obs.serial, obs.obs_id, obs.image_format)

    def ui_nodes(self, obs: Observation) -> list[UiNode] | None:
        """The parsed UI dump of an observation, None when it has none."""
        if obs.ui_dumped_at is None:
            return None
        key = (obs.serial, obs.obs_id)
        with self._lock:
            nodes = self._dumps.get(key)
        if nodes is None:
            nodes = parse_hierarchy(read_bytes(self.store.file(obs.serial, obs.obs_id, "xml")))
            with self._lock:
                self._remember(self._dumps, key, nodes)
        return nodes

    def reference(self, obs: Observation) -> Image.Image | None:
        """The observation's reference frame (grey, at its image size), None when it has none."""
        if not obs.reference:
            return None
        key = (obs.serial, obs.obs_id)
        with self._lock:
            image = self._references.get(key)
        if image is None:
            image = decode_reference(read_bytes(self.store.file(obs.serial, obs.obs_id, REFERENCE)))
            with self._lock:
                self._remember(self._references, key, image)
        return image

    @staticmethod
    def _remember(cache: dict[tuple[str, str], Any], key: tuple[str, str], value: Any) -> None:
        """Keep `value` among the last few of its kind (call with the lock held)."""
        if key not in cache and len(cache) >= _CACHED:
            cache.pop(next(iter(cache)))
        cache[key] = value

    def record(self, serial: str, entry: dict[str, Any]) -> None:
        """Append an action or observation record to the device's `actions.jsonl`."""
        append_jsonl(self.store.resource_dir(serial, create=True) / "actions.jsonl", entry)


def join_refusal(obs: Observation, now: float, screen: tuple[int, int, int, str | None] | None = None) -> str | None:
    """Why a UI dump taken `now` must not join `obs`, or None when it may: the screenshot is too old, or
    the device, as `screen` (width, height, rotation, focused window) says it is now, is not as it was."""
    return staleness(obs.seen(), now, None if screen is None else _facts(*screen), max_age_s=UI_JOIN_MAX_AGE_S,
                     purpose="for a UI dump to join it")  # fmt: skip


def turned(obs: Observation, width: int, height: int, rotation: int) -> str | None:
    """Why the image coordinates of `obs` no longer map to the screen (its size or rotation changed), or None."""
    return staleness(obs.seen(), time.time(), {"the screen": _screen_text(width, height, rotation)})


def _facts(width: int, height: int, rotation: int, window: str | None) -> dict[str, str]:
    return {"the screen": _screen_text(width, height, rotation), "the focused window": window or "none"}


def _screen_text(width: int, height: int, rotation: int) -> str:
    return f"{width}x{height} at rotation {rotation}"
