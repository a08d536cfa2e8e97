"""Input as a terminal receives it: ordered steps of text, named keys and pastes, encoded to bytes, with the
characters a terminal would echo (what a wait skips, see lookout.terminal.waits.echo)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lookout.core.errors import BadInput, Conflict, TooLarge
from lookout.terminal.input.keys import NotText, UnknownKeyError, bracketed_paste, encode_keys, encode_text


@dataclass(frozen=True, slots=True, kw_only=True)
class InputStep:
    """One step; a step with several parts sends them in the order paste, text, keys."""

    text: str | None = None
    keys: tuple[str, ...] = ()
    paste: str | None = None

    @property
    def empty(self) -> bool:
        return not self.text and not self.keys and not self.paste


@dataclass(frozen=True, slots=True, kw_only=True)
class EncodedInput:
    data: bytes
    echo: str
    """The visible characters of the text and pastes, in order (whitespace left out: terminals wrap, redraw
    and translate it)."""


def encode_steps(steps: Sequence[InputStep], *, bracketed: bool, app_cursor: bool) -> EncodedInput:
    """The bytes of `steps` in order; `bracketed`: the program enabled bracketed paste; `app_cursor`: DECCKM.
    Text that is no text or an unknown key name is a BadInput naming the step."""
    if not steps or all(step.empty for step in steps):
        raise BadInput("input needs text, keys or paste", field="input")
    data = bytearray()
    echo: list[str] = []
    for i, step in enumerate(steps):
        where = f"input[{i}]" if len(steps) > 1 else "input"
        try:
            if step.paste:
                data += bracketed_paste(step.paste, bracketed)
                echo.append(step.paste)
            if step.text:
                data += encode_text(step.text)
                echo.append(step.text)
        except NotText as exc:
            raise BadInput(f"input {exc}", field=f"{where}.{'paste' if step.paste else 'text'}") from exc
        if step.keys:
            try:
                data += encode_keys(list(step.keys), app_cursor=app_cursor)
            except UnknownKeyError as exc:
                raise BadInput(str(exc), field=f"{where}.keys") from exc
    visible = "".join(c for c in "".join(echo) if c.isprintable() and not c.isspace())
    return EncodedInput(data=bytes(data), echo=visible)


def encode_within(
    steps: Sequence[InputStep], bracketed: bool, app_cursor: bool, max_bytes: int, pending: int, terminal: str
) -> EncodedInput:
    """`encode_steps`, refused when the input is over `max_bytes` (413) or terminal `terminal` is not reading its
    input (`pending` bytes wait for it, 409)."""
    encoded = encode_steps(steps, bracketed=bracketed, app_cursor=app_cursor)
    size = len(encoded.data)
    if size > max_bytes:
        raise TooLarge(f"input of {size} bytes exceeds the limit of {max_bytes}")
    if pending + size > 4 * max_bytes:
        raise Conflict(f"terminal {terminal} is not reading its input ({pending} bytes pending)")
    return encoded
