"""Masking the shell integration's nonce in output (see app.terminal.shell_integration), in the holder that
writes the journal: the nonce never reaches a file or a reader, and the offsets where the shell wrote it
(genuine marks) are recorded beside it so the daemon can tell them from a program's imitation."""

from __future__ import annotations


class NonceFilter:
    """Takes the nonce out of a session's output before lookout stores or shows it (output.raw in the data
    dir, /raw, live streams): each occurrence becomes as many `*`, so every offset stays true; the scanner
    reads the original bytes. A read that ends in `nonce=` and the start of the nonce is held back until
    the next read, so a nonce split between two reads never shows in part."""

    def __init__(self, nonce: str) -> None:
        self._nonce = nonce.encode()
        self._mask = b"*" * len(self._nonce)
        self._held = b""

    def feed(self, data: bytes, final: bool = False) -> tuple[bytes, bytes]:
        """The output to process now (what was held, then `data`, less a new held tail unless `final`):
        as read, and with the nonce masked."""
        data = self._held + data
        cut = len(data) if final else self._tail_start(data)
        data, self._held = data[:cut], data[cut:]
        return data, data.replace(self._nonce, self._mask)

    def _tail_start(self, data: bytes) -> int:
        option = data.rfind(b"nonce=", max(0, len(data) - len(self._nonce) - 6))
        if option < 0:
            return len(data)
        rest = data[option + 6 :]
        return option + 6 if 0 < len(rest) < len(self._nonce) and self._nonce.startswith(rest) else len(data)

    def positions(self, data: bytes) -> list[int]:
        """Where the nonce starts in `data` (as `feed` returned it, before masking)."""
        found, pos = [], data.find(self._nonce)
        while pos >= 0:
            found.append(pos)
            pos = data.find(self._nonce, pos + len(self._nonce))
        return found
