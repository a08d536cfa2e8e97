"""The role every domain's registry plays: terminals (lookout.terminal.registry), devices (lookout.device.registry)
and pages (lookout.browser.registry) each have one, naming their resources by id, listing them, and showing again what a
frame of the timeline gave the agent (GET /v1/timeline/frames/{seq}).

Registries whose resources lookout makes and ends also have `create` and `close` (terminals, pages); the
devices' has neither, since the adb server connects them.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from lookout.core.archive import ArchivePart

Resource_co = TypeVar("Resource_co", covariant=True)


class Registry(Protocol[Resource_co]):
    def get(self, key: str, /) -> Resource_co:
        """The resource named `key` (NotFound when there is none)."""
        ...

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
