"""Settings, read from the environment (prefix LOOKOUT_) and overridable by `lookout serve` flags."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ENV_PREFIX = "LOOKOUT_"

_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def default_data_dir() -> Path:
    """`<repo>/data` when lookout runs from its source tree, else `$XDG_DATA_HOME/lookout`."""
    if (_SOURCE_ROOT / "pyproject.toml").is_file() and (_SOURCE_ROOT / "lookout").is_dir():
        return _SOURCE_ROOT / "data"
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "lookout"


class Settings(BaseModel):
    """Everything the daemon can be told; each field is also `LOOKOUT_<NAME>` in the environment (any case),
    which a value given to the constructor overrides. (A plain model: pydantic-settings took 10 ms of every
    start to import, for what `_from_environment` does.)"""

    model_config = ConfigDict(extra="ignore", validate_default=True)

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    data_dir: Path = Field(default_factory=default_data_dir)
    token: str | None = Field(None, description="API token; generated into <data_dir>/token when unset")
    allowed_hosts: tuple[str, ...] = Field(
        (), description="Host header names (comma-separated) accepted besides loopback ones, as clients reach lookout"
    )
    header_timeout_s: float = Field(
        10.0, gt=0, le=600, description="a request's line and headers must arrive within it"
    )
    body_timeout_s: float = Field(30.0, gt=0, le=3600, description="a request's body must arrive within it")
    takeover_wait_s: float = Field(
        60.0, gt=0, le=3600,
        description="in a hot restart, a request the new daemon accepted waits at most this long for it to take the "
        "terminals over, then is answered 503 (send it again)",
    )  # fmt: skip
    screen_engine: Literal["avt", "pyte"] = "avt"
    scrollback_lines: int = Field(2000, ge=0, le=100_000)
    max_sessions: int = Field(64, ge=1)
    max_streams: int = Field(
        256, ge=1, le=100_000, description="WebSocket connections open at once; one more is refused with the limit"
    )
    max_input_bytes: int = Field(1 << 20, ge=1, description="largest input accepted in one request")
    max_request_bytes: int = Field(4 << 20, ge=1024, description="largest request body accepted")
    max_journal_bytes: int = Field(
        8 << 30, ge=1 << 20, description="per session; output beyond it is counted, not stored"
    )
    retain_exited_days: float = Field(
        30.0, ge=0, description="exited terminals' files are pruned this long after they ended (0: kept)"
    )
    retain_exited_count: int = Field(
        500, ge=0, description="at most this many exited terminals are kept, the newest (0: no limit)"
    )
    retain_exited_mb: int = Field(
        4096, ge=0, description="exited terminals' files kept take at most this much (0: no limit)"
    )
    adb_host: str = Field("127.0.0.1", description="the adb server lookout uses (it never starts one)")
    adb_port: int = Field(5037, ge=1, le=65535)
    device_max_dimension: int = Field(
        1000, ge=100, le=8000, description="screenshots are scaled so their longest side fits this"
    )
    browser_executable: str | None = Field(
        None, description="Chromium to drive; default: the system's chromium, else Playwright's own"
    )
    browser_cdp_url: str | None = Field(
        None, description="attach to a running Chromium over CDP (http://host:port of --remote-debugging-port)"
    )
    browser_ws_endpoint: str | None = Field(
        None, description="use a Playwright browser server (ws://host:port/ of `playwright run-server`)"
    )
    read_only: bool = Field(False, description="serve the data dir read-only (what `lookout replay` does)")
    page_idle_s: float = Field(1800, gt=0, description="a browser page unused this long is closed (page.closed event)")
    max_pages: int = Field(20, ge=1, description="open browser pages at most; one more is a 409 that says what to do")
    upload_dir: Path | None = Field(None, description="page uploads take files from here only (default <data>/uploads)")
    device_timeout_s: float = Field(20.0, gt=0, le=600, description="limit of one adb command (capture, dump)")
    web_dir: Path = Field(
        default_factory=lambda: Path(__file__).resolve().parent / "web",
        description="the web UI's files, with xterm.js installed by npm in node_modules",
    )
    summarizer_url: str | None = Field(
        None, description="OpenAI-compatible API (base URL or .../chat/completions) that summarises old history"
    )
    summarizer_model: str = Field("default", description="the model named in summariser requests")
    summarizer_key: str | None = Field(None, description="bearer key for the summariser, when it needs one")
    compress_threshold: int = Field(2000, ge=1, description="tokens a block of 100 frames needs to be summarised")
    compress_protect: int = Field(300, ge=0, description="the newest frames, never summarised")
    ws_compression: bool = Field(
        False, description="permessage-deflate on WebSockets: less traffic, but the daemon's loop pays the CPU"
    )

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, given: Any) -> Any:
        if not isinstance(given, dict):
            return given
        environment = {name.upper(): value for name, value in os.environ.items() if name.upper().startswith(ENV_PREFIX)}
        named = {field: environment[ENV_PREFIX + field.upper()] for field in cls.model_fields
                 if ENV_PREFIX + field.upper() in environment}  # fmt: skip
        return {**named, **given}

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        return tuple(h.strip() for h in value.split(",") if h.strip()) if isinstance(value, str) else value
