"""Text for `input text`: what it can carry, and the commands that type a string with it.

`input text` types ASCII only; it reads `%s` as a space and its argument goes through the device's shell.
So spaces become `%s`, a literal `%s` is typed in two calls (`%`, then `s...`), every argument is
shell-quoted, and newlines and tabs are typed as the ENTER and TAB keys. Anything else (non-ASCII, other
control characters) cannot be typed this way and is refused with the reason.

Stock Android offers no reliable other way without a helper app: the usual route (set the clipboard, then
send KEYCODE_PASTE) needs something on the device to set the clipboard, and the shell has no standard
command for it (`cmd clipboard` is missing on common images; scrcpy and similar tools push their own
server or keyboard app to do it). So non-ASCII text stays a 400 rather than a guess that may type garbage.
"""

from __future__ import annotations

import shlex

from lookout.core.errors import BadInput
from lookout.device.keys import KEYCODES

MAX_TEXT = 10_000
_KEYS = {"\n": KEYCODES["ENTER"], "\t": KEYCODES["TAB"]}


def check_typeable(text: str) -> None:
    """Raise BadInput naming the first character `input text` cannot type."""
    if len(text) > MAX_TEXT:
        raise BadInput(f"text is {len(text)} characters; at most {MAX_TEXT} per call", field="text")
    for i, char in enumerate(text):
        if char in _KEYS:
            continue
        if not char.isascii() or not char.isprintable():
            raise BadInput(
                f"character {char!r} (U+{ord(char):04X}) at index {i} cannot be typed: Android's `input text` "
                "carries printable ASCII only (newline and tab are sent as ENTER and TAB), and stock Android has "
                "no reliable shell command to set the clipboard for a paste; other text needs a keyboard app "
                "on the device (such as ADBKeyBoard) driven with `am broadcast`",
                field="text",
            )


def type_commands(text: str) -> list[str]:
    """Shell commands that type `text` on the device, in order."""
    check_typeable(text)
    commands: list[str] = []
    chunk = ""

    def flush() -> None:
        nonlocal chunk
        if chunk:
            commands.append("input text " + shlex.quote(chunk.replace(" ", "%s")))
            chunk = ""

    for char in text:
        if char in _KEYS:
            flush()
            commands.append(f"input keyevent {_KEYS[char]}")
        elif char == "s" and chunk.endswith("%"):
            flush()  # `%` then `s` in one argument would read as a space
            chunk = "s"
        else:
            chunk += char
    flush()
    return commands
