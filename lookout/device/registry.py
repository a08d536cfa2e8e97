"""The devices lookout can reach: every device the adb server lists, and one of them by serial.

Devices are not created or closed by lookout (the adb server connects them; `adb connect` and `adb
disconnect` are its business), so the registry lists and names them only: `describe_all` and `get`.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookout.core.archive import ArchivePart
from lookout.core.errors import Gone, NotFound
from lookout.core.events import EventBus
from lookout.device.adb import Adb
from lookout.timeline.recording import NullRecorder, Recorder

if TYPE_CHECKING:
    from lookout.device.device import Device
    from lookout.device.info import DeviceInfo
    from lookout.device.reading import AdbLink

ADB_THREADS = 8


class DeviceRegistry:
    """Its devices' code (capture, UI trees, images) is loaded on first use: a daemon nobody asks about a
    device never pays for it (its start is the floor of every restart)."""

    def __init__(
        self, root: Path, adb: Adb, max_dimension: int, bus: EventBus, recorder: Recorder | None = None
    ) -> None:
        self.adb = adb
        self._root, self._max_dimension, self._bus = root, max_dimension, bus
        self._recorder = recorder or NullRecorder()
        self._pool = ThreadPoolExecutor(max_workers=ADB_THREADS, thread_name_prefix="adb")
        self._link: AdbLink | None = None

    @property
    def link(self) -> AdbLink:
        if self._link is None:
            from lookout.device.observations import DeviceObservations
            from lookout.device.observer import Observer
            from lookout.device.reading import AdbLink

            self._link = AdbLink(self.adb, self._pool, DeviceObservations(self._root), Observer(self.adb),
                                 self._max_dimension, self._bus, self._recorder)  # fmt: skip
        return self._link

    def get(self, serial: str) -> Device:
        """The device by serial; whether the adb server has it (and in which state) each call checks."""
        from lookout.device.device import Device

        return Device(serial, self.link)

    async def describe_all(self) -> list[dict[str, Any]]:
        """Every device the adb server knows, with its screen's facts where it is online."""
        devices = await self.link.thread(self.adb.devices)
        online = [serial for serial, state in devices if state == "device"]
        infos = await asyncio.gather(*(self._info_or_none(serial) for serial in online))
        by_serial = dict(zip(online, infos, strict=True))
        out = []
        for serial, state in devices:
            info = by_serial.get(serial)
            entry: dict[str, Any] = {"serial": serial, "state": state, "model": None, "width": None,
                                     "height": None, "rotation": None}  # fmt: skip
            if info is not None:
                entry.update(model=info.model, width=info.width, height=info.height, rotation=info.rotation)
            elif state in (advice := _state_advice()):
                entry["advice"] = advice[state]
            out.append(entry)
        return out

    async def _info_or_none(self, serial: str) -> DeviceInfo | None:
        try:
            return await self.link.thread(self.link.info, serial)
        except Exception:  # noqa: BLE001 (a device that fails to describe itself is still listed)
            return None

    def exported(self, serial: str, refs: list[dict[str, Any]]) -> list[ArchivePart]:
        """The files of the observations the refs name (the image, the UI dump, the reference frame)."""
        obs_ids = {r["obs_id"] for r in refs if isinstance(r.get("obs_id"), str)}
        return [part for obs_id in sorted(obs_ids) for part in self.link.store.store.archive_parts(serial, obs_id)]

    async def observed(self, serial: str, refs: dict[str, Any]) -> dict[str, Any] | None:
        """What a frame of this device gave the agent: the screenshot and, when its UI was read, the elements
        as listed then (None for a frame with no observation); Gone when the record is gone."""
        return await asyncio.to_thread(self._observed, serial, refs)

    def _observed(self, serial: str, refs: dict[str, Any]) -> dict[str, Any] | None:
        obs_id = refs.get("obs_id")
        if not isinstance(obs_id, str):
            return None
        store = self.link.store
        try:
            obs = store.get(serial, obs_id)
        except NotFound:
            raise Gone(f"observation {obs_id} of device {serial} is gone: it cannot be shown again") from None
        nodes = store.ui_nodes(obs)
        shown: dict[str, Any] = {"kind": "device screenshot", "serial": serial, "obs_id": obs_id, "device": obs.device,
                                 "image": obs.image, "url": f"/v1/devices/{serial}/observations/{obs_id}/image"}  # fmt: skip
        if nodes is not None:
            screen = (obs.scale.device_width, obs.scale.device_height)
            from lookout.device.shown import render_elements

            shown["elements"] = render_elements(nodes, obs.scale.factor, screen=screen)["elements"]
        return shown

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _state_advice() -> dict[str, str]:
    from lookout.device.device import STATE_ADVICE

    return STATE_ADVICE
