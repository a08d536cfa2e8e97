"""Masking the shell integration's nonce in output, in the holder, before any byte is stored (see
lookout.terminal.process.shell_integration): the nonce never reaches a file or a reader, and the offsets where the shell
wrote it (genuine marks) are recorded beside it, so the daemon can tell them from a program's imitation."""

from __future__ import annotations


class NonceFilter:
    """Takes the nonce out of a terminal's output before lookout stores or shows it (output.raw in the data
    dir, /raw, live streams): each occurrence becomes as many `*`, so every offset stays true. A read that
    ends in `nonce=` and the start of the nonce is held back until the next read, so a nonce split between
    two reads never shows in part."""

    def __init__(self, nonce: str) -> None:
        self._nonce = nonce.encode()
        self._mask = b"*" * len(self._nonce)
        self._held = b""
        self.positions: list[int] = []
        """Where the nonce started in what the last `feed` returned."""

    def feed(self, data: bytes, final: bool = False) -> bytes:
        """The output to store now, the nonce masked: what was held, then `data`, less a new held tail unless
        `final`. `positions` says where the masked nonces start in it."""
        data = self._held + data
        cut = len(data) if final else self._tail_start(data)
        data, self._held = data[:cut], data[cut:]
        found, pos = [], data.find(self._nonce)
        while pos >= 0:
            found.append(pos)
            pos = data.find(self._nonce, pos + len(self._nonce))
        self.positions = found
        return data.replace(self._nonce, self._mask) if found else data

    def _tail_start(self, data: bytes) -> int:
        option = data.rfind(b"nonce=", max(0, len(data) - len(self._nonce) - 6))
        if option < 0:
            return len(data)
        rest = data[option + 6 :]
        return option + 6 if 0 < len(rest) < len(self._nonce) and self._nonce.startswith(rest) else len(data)
