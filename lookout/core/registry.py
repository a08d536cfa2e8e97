"""The role every domain's registry plays: terminals (lookout.terminal.registry), devices (lookout.device.registry)
and pages (lookout.browser.registry) each have one, listing their resources and showing again what a frame of the
timeline gave the agent (GET /v1/timeline/frames/{seq}). Each also names its resources by id with its own `get`
(the terminals' is async: an exited terminal's session is built when asked for), which nothing calls through
this role.

Registries whose resources lookout makes and ends also have `create` and `close` (terminals, pages); the
devices' has neither, since the adb server connects them.
"""

from __future__ import annotations

from typing import Any, Protocol

from lookout.core.archive import ArchivePart


class Registry(Protocol):
    async def describe_all(self) -> list[dict[str, Any]]:
        """Every resource's facts, as listings show them."""
        ...

    def exported(self, key: str, refs: list[dict[str, Any]], /) -> list[ArchivePart]:
        """The files a replay archive needs to show again what frames of resource `key` with these `refs`
        gave the agent (blocking: call it in a thread)."""
        ...

    async def observed(self, key: str, refs: dict[str, Any], /) -> dict[str, Any] | None:
        """What a timeline frame of resource `key` with these `refs` gave the agent, shown again (None when
        the frame holds no observation; Gone when its record is gone)."""
        ...
