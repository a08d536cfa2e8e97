"""The last stage of a terminal's ingest: output queued for the screen engine, handed over in one go.

Output is fed to the screen engine lazily: before anything reads the screen (the next delta, which is due
after any output, within lookout.terminal.journal.deltas.UNWATCHED_INTERVAL_S), or once enough is pending. A large
batch of plain text is cut by lookout.terminal.screen.skip_ahead, so the engine is spared what nobody can see.
"""

from __future__ import annotations

from lookout.terminal.screen.skip_ahead import plan_feed

SYNC_BYTES = {"avt": (256 << 10, 2 << 20), "pyte": (16 << 10, 16 << 10)}
"""How much output may wait for the engine: the first figure normally, the second in a flood of plain text.
Slow engines get small batches so that one flooding session never holds the event loop for long; in a plain
flood, large batches let skip_ahead spare the engine what nobody can see."""


class LazyFeed:
    """Output not yet fed to the screen engine, in order."""

    def __init__(self, engine: str) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self._sizes = SYNC_BYTES.get(engine, (16 << 10, 16 << 10))
        self._limit = self._sizes[0]

    def push(self, data: bytes) -> bool:
        """Queue `data`; returns whether so much is pending that it should be fed now."""
        self._chunks.append(data)
        self._size += len(data)
        return self._size >= self._limit

    def take(self, keep_lines: int) -> list[bytes]:
        """The pieces to feed for everything pending (see lookout.terminal.screen.skip_ahead.plan_feed: `keep_lines`
        is the number of lines the engine can still show), or [] when nothing is."""
        if not self._chunks:
            return []
        data = self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        pieces = plan_feed(data, keep_lines)
        self._limit = self._sizes[len(pieces) > 1]
        return pieces
