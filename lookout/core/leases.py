"""Leases: one hand (an agent, `web-ui`, a person through `lookout attach`) holds a terminal or a page for a
time. While a lease is held, input or an action from another hand is refused (`Leased`, a 409 naming the
holder and when the lease ends), except a person's that takes over knowingly (`take_over`), which is noted
on the lease. Only the holder renews or lets go; a lease ends by itself when it expires.

The book lives in one file, `<data>/leases.json` (written atomically, 0600), read when the daemon starts,
so a lease survives a hot restart and a kill -9. Times are wall-clock Unix seconds for that reason."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lookout.core.errors import BadInput, Conflict, NotFound
from lookout.core.storage import atomic_write_json, read_json

log = logging.getLogger(__name__)

MIN_LEASE_S = 1.0
MAX_LEASE_S = 3600.0
"""A longer hold is a renewal away; an agent that died lets its lease go within the hour."""
MAX_FILE_BYTES = 1 << 20
MAX_OVERRIDES = 20


def when(moment: float) -> str:
    """A Unix time as an ISO 8601 UTC time to the second."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Lease:
    """`resource` is the timeline's name of it (`terminal:t_…`, `page:p_…`); `taken_over_by`: the hands
    that typed or acted knowingly despite it."""

    resource: str
    holder: str
    taken_at: float
    expires_at: float
    taken_over_by: tuple[str, ...] = ()

    def to_json(self, now: float) -> dict[str, Any]:
        return {"holder": self.holder, "taken_at": when(self.taken_at), "expires_at": when(self.expires_at),
                "expires_in_s": round(max(0.0, self.expires_at - now), 1),
                "taken_over_by": list(self.taken_over_by)}  # fmt: skip

    def line(self, now: float) -> str:
        """One line for a person: who holds it and until when."""
        return f"held by {self.holder!r} until {when(self.expires_at)} ({self.expires_at - now:.0f} s left)"

    def taken_over_line(self, what: str) -> str:
        """What a hand that took over did, for the timeline (`what`: "typed", "acted")."""
        return f"{what} knowingly despite the lease of {self.holder!r} (until {when(self.expires_at)})"


class Leased(Conflict):
    """Input or an action by a hand that does not hold the resource's lease."""

    code = "leased"


def check_duration(duration_s: float) -> float:
    """The lease's length in seconds; BadInput naming the range when it is not a finite number within it."""
    if not math.isfinite(duration_s) or not MIN_LEASE_S <= duration_s <= MAX_LEASE_S:
        raise BadInput(f"duration_s={duration_s}: a lease lasts from {MIN_LEASE_S:g} to {MAX_LEASE_S:g} seconds; "
                       "renew it before it ends to hold longer", field="duration_s")  # fmt: skip
    return duration_s


class LeaseBook:
    """Every lease of the daemon, by resource. `path` None keeps them in memory only (a domain used alone)."""

    def __init__(self, path: Path | None, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self._leases: dict[str, Lease] = {}
        self.released = False
        """Another daemon took the data dir over (a hot restart): nothing is written here any more."""

    def load(self) -> None:
        """Read the book the daemon before left (expired leases dropped); a damaged file is logged and set
        aside, never trusted in part."""
        if self.path is None or not self.path.exists():
            return
        try:
            stored = read_json(self.path, MAX_FILE_BYTES)
            leases = [Lease(e["resource"], e["holder"], float(e["taken_at"]), float(e["expires_at"]),
                            tuple(e.get("taken_over_by", ()))) for e in stored["leases"]]  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("leases: %s cannot be read (%s); starting with no lease", self.path, exc)
            return
        now = self.clock()
        self._leases = {lease.resource: lease for lease in leases if lease.expires_at > now}

    def current(self, resource: str) -> Lease | None:
        """The lease held on `resource` now (an expired one has ended by itself)."""
        lease = self._leases.get(resource)
        if lease is not None and lease.expires_at <= self.clock():
            del self._leases[resource]
            return None
        return lease

    def describe(self, resource: str) -> dict[str, Any] | None:
        lease = self.current(resource)
        return lease.to_json(self.clock()) if lease is not None else None

    def take(self, resource: str, hand: str, duration_s: float) -> tuple[Lease, bool]:
        """Take the lease for `duration_s` from now, or renew it when `hand` holds it (the bool says which:
        True for a renewal); Leased when another hand holds it."""
        check_duration(duration_s)
        now = self.clock()
        held = self.current(resource)
        if held is not None and held.holder != hand:
            raise Leased(f"{resource} is {held.line(now)}: only {held.holder!r} renews or lets it go",
                         holder=held.holder, expires_at=when(held.expires_at))  # fmt: skip
        lease = Lease(resource, hand, held.taken_at if held else now, now + duration_s,
                      held.taken_over_by if held else ())  # fmt: skip
        self._set(lease)
        return lease, held is not None

    def let_go(self, resource: str, hand: str) -> Lease:
        """End `hand`'s lease; NotFound when none is held, Leased when another hand holds it."""
        held = self.current(resource)
        if held is None:
            raise NotFound(f"{resource} has no lease (it was never taken, was let go, or expired)")
        if held.holder != hand:
            raise Leased(f"{resource} is {held.line(self.clock())}: only {held.holder!r} lets it go",
                         holder=held.holder, expires_at=when(held.expires_at))  # fmt: skip
        self._set(None, resource)
        return held

    def admit(self, resource: str, hand: str, take_over: bool = False) -> Lease | None:
        """Let `hand` act on `resource`, or raise Leased naming the holder. With `take_over` (a person who
        was shown the lease) the act goes through: returns the lease the first time `hand` takes it over
        (to be recorded), else None."""
        held = self.current(resource)
        if held is None or held.holder == hand:
            return None
        if not take_over:
            raise Leased(f"{resource} is {held.line(self.clock())}: wait for it to end, or ask {held.holder!r} "
                         "to let it go (a person may type anyway by taking over knowingly)",
                         holder=held.holder, expires_at=when(held.expires_at))  # fmt: skip
        if hand in held.taken_over_by:
            return None
        lease = replace(held, taken_over_by=(*held.taken_over_by, hand)[-MAX_OVERRIDES:])
        self._set(lease)
        return lease

    def forget(self, resource: str) -> None:
        """The resource is gone: so is its lease."""
        if resource in self._leases:
            self._set(None, resource)

    def _set(self, lease: Lease | None, resource: str = "") -> None:
        if lease is None:
            self._leases.pop(resource, None)
        else:
            self._leases[lease.resource] = lease
        if self.path is None or self.released:
            return
        entries = [{"resource": e.resource, "holder": e.holder, "taken_at": e.taken_at, "expires_at": e.expires_at,
                    "taken_over_by": list(e.taken_over_by)} for e in self._leases.values()]  # fmt: skip
        atomic_write_json(self.path, {"leases": entries})  # a few hundred bytes: as the terminals' last_input.json


class Holdable:
    """What a terminal session and a page share of the leases (mixed in): take or renew, let go, describe."""

    leases: LeaseBook

    def lease_key(self) -> str:
        """The resource's name in the book."""
        raise NotImplementedError

    def unholdable(self) -> str | None:
        """Why it cannot be held now (it ended, it closed), or None."""
        return None

    def hold(self, hand: str, duration_s: float) -> tuple[Lease, bool]:
        """Take (or, for its holder, renew) the lease for `hand`."""
        if (why := self.unholdable()) is not None:
            raise Conflict(why)
        return self.leases.take(self.lease_key(), hand, duration_s)

    def let_go(self, hand: str) -> Lease:
        """End `hand`'s lease."""
        return self.leases.let_go(self.lease_key(), hand)

    def lease(self) -> dict[str, Any] | None:
        return self.leases.describe(self.lease_key())

    def admit(self, hand: str, take_over: bool = False) -> Lease | None:
        """Let `hand` act on it, or raise Leased (see LeaseBook.admit)."""
        return self.leases.admit(self.lease_key(), hand, take_over)
