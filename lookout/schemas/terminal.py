"""The request models of the terminal API: POST /v1/terminals, /input, /resize, /wait, /act, GET /screen.

The HTTP routes (lookout.api.terminals), the WebSocket input messages (lookout.api.streams) and the MCP shim's
terminal tools (lookout.clients.mcp.terminal_tools) all validate with these, so their limits and field names agree.
Pydantic only: no FastAPI, nothing of the domain but its size limits (lookout.terminal.holder.sizes, standard library
only; the shim imports this module).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from lookout.core.printable import has_controls, printable
from lookout.schemas.common import MAX_JSON_INT, Strict
from lookout.terminal.holder.sizes import MAX_COLS, MAX_ROWS, MIN_SIZE

MAX_TIMEOUT_MS = 300_000
DEFAULT_ACT_STABLE_MS = 300

State = Literal["idle", "running", "awaiting_input", "password", "tui", "exited"]
Status = Literal["running", "exited", "lost"]
ListingTokens = Annotated[int | None, Field(ge=100, le=1_000_000, description=(
    "at most this many tokens: running terminals first, then the newest; `more` says how many were left out"))]  # fmt: skip


class CreateTerminal(Strict):
    command: str | list[str] | None = Field(
        None,
        description="none: your shell; a string: a command line (a bare shell name starts that shell); a list: argv",
    )
    cwd: str | None = None
    env: dict[str, str] | None = None
    cols: int = Field(120, ge=MIN_SIZE, le=MAX_COLS)
    rows: int = Field(40, ge=MIN_SIZE, le=MAX_ROWS)
    name: str | None = Field(None, max_length=200)
    shell_integration: bool = Field(True, description="command blocks from hooks in bash or zsh")

    @field_validator("name")
    @classmethod
    def _no_controls(cls, value: str | None) -> str | None:
        """A name is shown to people (`lookout ls`, the UI): control characters are refused, not stored."""
        if value is not None and has_controls(value):
            raise ValueError(f"a terminal name may not hold control characters: {printable(value)!s}")
        return value


class InputStep(Strict):
    # One step of input; its parts go in the order paste, text, keys. (A comment, not a docstring: every
    # agent's tool list carries the schemas.)
    text: str | None = None
    keys: list[str] | None = Field(None, description='"Enter", "Tab", "Escape", "Up", "C-c", "M-x", "F5", ...')
    paste: str | None = None


TerminalInput = InputStep | list[InputStep]
"""An object (paste, then text, then keys) or a list of steps sent in their order."""


class Resize(Strict):
    cols: int = Field(ge=MIN_SIZE, le=MAX_COLS)
    rows: int = Field(ge=MIN_SIZE, le=MAX_ROWS)


class Until(Strict):
    # What ends a wait: any condition given, or all at once (match=all). See docs/terminals.md.
    regex: str | None = Field(
        None, max_length=10_000, description="RE2, multiline, in the output after your input's echo"
    )
    on: Literal["stream", "screen"] = "stream"
    stable_ms: int | None = Field(None, ge=0, le=MAX_TIMEOUT_MS, description="no output for this long")
    state_in: list[State] | None = None
    exit: bool = False
    block_end: bool = Field(False, description="a shell command ended and its prompt came")
    match: Literal["any", "all"] = "any"
    echo: bool = Field(False, description="regex may match the echo")


class WaitRequest(Strict):
    until: Until
    since: int | None = Field(None, ge=0, le=MAX_JSON_INT, description="output offset; default: your last input")
    timeout_ms: int = Field(10_000, ge=0, le=MAX_TIMEOUT_MS)


class ScreenOptions(Strict):
    # The options of GET /screen (as query parameters) and of act's `screen`; see lookout.terminal.screen.layers.
    layers: str = Field("text,cursor", description="also fgColors,bgColors,styles,bold,italic,underline")
    region: str | None = Field(None, description="left,top,width,height")
    around_cursor: int | None = Field(None, ge=0, le=10_000, description="N rows around the cursor")
    compact: bool = Field(False, description="no empty rows")
    encoding: Literal["auto", "runs", "cells"] = "auto"
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    format: Literal["json", "text"] = "json"
    scrollback: int = Field(0, ge=0, le=100_000)
    changed_since: int | None = Field(None, ge=0, le=MAX_JSON_INT, description="delta cursor")

    @field_validator("layers", "region", mode="before")
    @classmethod
    def _join_list(cls, value: Any) -> Any:
        """JSON bodies may give layers and region as lists."""
        return ",".join(str(item) for item in value) if isinstance(value, list) else value


class ScreenQuery(ScreenOptions):
    # GET /screen's query: the options, and the moment to show (the present when neither is given).
    at: int | None = Field(
        None, le=MAX_JSON_INT, description="the screen after this many bytes of output (a raw offset)"
    )
    at_time: str | None = Field(None, max_length=64, description="the screen at this time: ISO 8601, or Unix ms")


class ActRequest(Strict):
    input: TerminalInput | None = None
    until: Until | None = Field(None, description=f"default: no output for {DEFAULT_ACT_STABLE_MS} ms")
    since: int | None = Field(None, ge=0, le=MAX_JSON_INT, description="without input: wait from this cursor")
    timeout_ms: int = Field(10_000, ge=0, le=MAX_TIMEOUT_MS)
    screen: ScreenOptions = ScreenOptions()
    detail: bool = Field(False, description="also the input, the whole wait result and the screen's metadata")
