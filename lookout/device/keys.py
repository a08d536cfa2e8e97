"""Android key names (`HOME`, `BACK`, `KEYCODE_ENTER`, ...) and keycodes, for `input keyevent`."""

from __future__ import annotations

from lookout.core.errors import BadInput

KEYCODES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "STAR": 17, "POUND": 18,
    "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23,
    "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27, "CLEAR": 28,
    "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82, "NOTIFICATION": 83, "SEARCH": 84,
    "MEDIA_PLAY_PAUSE": 85, "MEDIA_STOP": 86, "MEDIA_NEXT": 87, "MEDIA_PREVIOUS": 88,
    "PAGE_UP": 92, "PAGE_DOWN": 93, "ESCAPE": 111, "FORWARD_DEL": 112, "MOVE_HOME": 122, "MOVE_END": 123,
    "VOLUME_MUTE": 164, "APP_SWITCH": 187, "BRIGHTNESS_DOWN": 220, "BRIGHTNESS_UP": 221,
    "SLEEP": 223, "WAKEUP": 224, "ALL_APPS": 284,
}  # fmt: skip
ALIASES = {"BACKSPACE": "DEL", "DELETE": "FORWARD_DEL", "RECENTS": "APP_SWITCH", "UP": "DPAD_UP",
           "DOWN": "DPAD_DOWN", "LEFT": "DPAD_LEFT", "RIGHT": "DPAD_RIGHT", "ESC": "ESCAPE"}  # fmt: skip
MAX_KEYCODE = 400


def keycode(key: str | int) -> int:
    """A key name (case-insensitive, with or without `KEYCODE_`), an alias, or a keycode -> the keycode."""
    if isinstance(key, int) or (key.strip().isascii() and key.strip().isdigit()):  # not "²": isdigit, not int
        code = int(key)
        if 0 < code <= MAX_KEYCODE:
            return code
        raise BadInput(f"keycode {code} is out of range 1-{MAX_KEYCODE}", field="key")
    name = key.strip().upper().removeprefix("KEYCODE_")
    name = ALIASES.get(name, name)
    if name in KEYCODES:
        return KEYCODES[name]
    raise BadInput(f"unknown key {key!r}; use a keycode number or one of {', '.join(sorted(KEYCODES))}", field="key")
