"""What every domain's request contracts share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

MAX_JSON_INT = 2**53 - 1
"""The largest integer every JSON client reads exactly: the bound of every offset, cursor and number asked for."""


class Strict(BaseModel):
    """A request body that refuses fields it does not know (a typo is an error, not a silent default)."""

    model_config = ConfigDict(extra="forbid")


class LeaseRequest(Strict):
    # How long to hold the terminal or page (seconds, 1 to 3600); taking it again renews it.
    duration_s: float
