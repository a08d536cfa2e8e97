"""The parameters the terminal tools share, each with the description the model reads in the tool's schema.

They mirror the daemon's request fields (POST /v1/terminals/{id}/input, /wait, /act, GET /screen); the
daemon validates them again and its message comes back when it refuses one.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clients.mcp.daemon import without_none

MAX_WAIT_MS = 50_000
"""Below the 60 s after which MCP clients commonly give up on a tool call."""

State = Literal["idle", "running", "awaiting_input", "password", "tui", "exited"]

TerminalId = Annotated[
    str, Field(description="the terminal's id (from terminal_open or terminal_list), e.g. t_3f9a2c1b7e")
]

Text = Annotated[
    str | None,
    Field(description='characters to type, sent as they are; nothing runs until you also send keys=["Enter"]'),
]
Keys = Annotated[
    list[str] | None,
    Field(
        description='tmux-style key names sent after text: "Enter", "Tab", "Escape", "BSpace", "Up", "PageDown", '
        '"F5", "C-c", "C-d", "M-x", or any single character'
    ),
]
Paste = Annotated[
    str | None,
    Field(description="long or multi-line text, sent first, as a bracketed paste when the program enabled it"),
]

TimeoutMs = Annotated[
    int,
    Field(
        ge=0,
        le=MAX_WAIT_MS,
        description=f"how long the daemon waits, at most {MAX_WAIT_MS} ms; a timeout is not an error: the "
        "result has matched=false and `cursor`, the journal offset to pass as `since` to wait on from there",
    ),
]


class Until(BaseModel):
    """What to wait for; the wait ends as soon as any condition given holds."""

    model_config = ConfigDict(extra="forbid")

    regex: str | None = Field(
        None,
        description="RE2 regex (Python syntax without backreferences and lookaround), multiline (^ and $ match at each "
        "line), searched in the output written "
        "after `since` with escape sequences removed, or in the screen's text when on=screen",
    )
    on: Literal["stream", "screen"] = Field("stream", description="where `regex` is searched")
    stable_ms: int | None = Field(None, ge=0, le=MAX_WAIT_MS, description="no output for this many ms")
    state_in: list[State] | None = Field(
        None,
        description="the terminal's state is one of these: idle (a shell at its prompt), running, awaiting_input "
        "(a program reads the terminal), password (input without echo), tui (full-screen program), exited",
    )
    exit: bool = Field(False, description="the program exited")
    block_end: bool = Field(
        False,
        description="a shell command finished; the result names the block (n, command, exit_code). Needs "
        "shell integration (the default shell, or bash or zsh)",
    )


Layers = Annotated[
    str | None,
    Field(
        description="comma-separated: text,cursor (the default) and fgColors,bgColors,styles,bold,italic,underline "
        "(one string or run list per row each; ask for them only when colour or style matters)"
    ),
]
Region = Annotated[str | None, Field(description="left,top,width,height in cells: only that part of the screen")]
AroundCursor = Annotated[
    int | None, Field(ge=0, le=10_000, description="only N rows above and below the cursor's row (not with region)")
]
Compact = Annotated[
    bool, Field(description="leave out empty rows; `rows` then gives the row number of each row returned")
]
MaxTokens = Annotated[
    int | None,
    Field(
        ge=1, le=1_000_000, description="keep the first and last rows within this many tokens; `omitted` counts the cut"
    ),
]
Scrollback = Annotated[int, Field(ge=0, le=100_000, description="also the newest N lines that scrolled off the top")]


def screen_options(
    layers: str | None, region: str | None, around_cursor: int | None, compact: bool, max_tokens: int | None,
    scrollback: int,
) -> dict[str, Any]:
    """The screen options as the daemon names them, without those left at the daemon's default."""
    options = {
        "layers": layers,
        "region": region,
        "around_cursor": around_cursor,
        "compact": compact,
        "max_tokens": max_tokens,
        "scrollback": scrollback or None,
    }
    return without_none(options)


def terminal_input(text: str | None, keys: list[str] | None, paste: str | None) -> dict[str, Any]:
    """The input object of /input and /act (empty when nothing is to be sent)."""
    return without_none({"text": text, "keys": keys, "paste": paste})
