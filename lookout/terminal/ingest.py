"""A terminal's ingest pipeline: what the program writes, in order, from the PTY to every reader.

Each batch of output comes from the journal the terminal's holder writes (lookout.terminal.journal.follower: the
bytes as stored, with where the genuine shell marks are and when the holder journaled them), is read by the
side scanner (lookout.terminal.screen.scanner: title, cwd, shell marks that make command blocks, modes, and terminal
queries, which are answered here), then is queued for the screen model (which feeds its engine lazily,
skipping ahead through floods: lookout.terminal.screen.lazy_feed) and handed to the output listeners (live streams).
One way: the bytes are never rewritten on the way.
"""

from __future__ import annotations

from collections.abc import Callable

from lookout.terminal.blocks.blocks import Block, BlockTracker
from lookout.terminal.journal.follower import Batch
from lookout.terminal.screen.model import ScreenModel
from lookout.terminal.screen.scanner import (
    MAX_OSC_PAYLOAD,
    CwdChanged,
    ModeChanged,
    Query,
    ShellMark,
    SideScanner,
    TitleChanged,
    query_reply,
)

BlockSink = Callable[[str, Block], None]
"""on_block("started" | "ended", block)"""


class Ingest:
    """The pipeline of one live terminal, from journal offset `offset` on. `answer` writes a reply to a
    terminal query ahead of queued input (queries before `answer_from`, written while no daemon followed the
    terminal, are not answered: too late); `on_block` hears of blocks that start and end; `on_output` is
    called after each batch."""

    def __init__(
        self,
        screen: ScreenModel,
        blocks: BlockTracker,
        *,
        offset: int,
        cwd: str,
        answer: Callable[[bytes], None],
        on_block: BlockSink,
        on_output: Callable[[], None],
        on_size: Callable[[int, int], None],
        answer_from: int = 0,
    ) -> None:
        """`cwd`: where the program started (a block's cwd until the shell reports one); `on_size(cols, rows)`:
        the terminal took that size here, in the stream (before the bytes that follow)."""
        self.offset = offset
        self.reported_cwd: str | None = None
        self._screen = screen
        self._blocks = blocks
        self._cwd = cwd
        self._answer = answer
        self._on_block = on_block
        self._on_output = on_output
        self._on_size = on_size
        self._scanner = SideScanner()
        self.answer_from = answer_from
        self._listeners: set[Callable[[bytes], None]] = set()
        self._marks: dict[int, float] = {}
        """Genuine marks not yet scanned to their end: where each masked nonce starts, and when it came."""

    def feed(self, batch: Batch) -> None:
        """Take the next output (see lookout.terminal.journal.follower.Batch)."""
        if batch.size is not None:
            self._on_size(*batch.size)
        data = batch.data
        if not data:
            return
        screen = self._screen
        base = self.offset
        self.offset += len(data)
        if batch.marks:
            self._marks.update(batch.marks)
        pos = 0
        for event in self._scanner.feed(data):
            if isinstance(event, Query):
                screen.feed(data[pos : event.end], base + event.end)  # the reply needs the cursor there
                pos = event.end
                if base + event.end > self.answer_from:
                    cur = screen.current().cursor()
                    self._answer(query_reply(event.kind, cur.row, cur.col))
            elif isinstance(event, TitleChanged):
                screen.title = event.title
            elif isinstance(event, CwdChanged):
                if self._blocks.trusts_cwd(self._genuine(base, event.nonce_at) is not None):
                    self.reported_cwd = event.path
            elif isinstance(event, ShellMark):
                at = self._genuine(base, event.nonce_at)
                cwd = self.reported_cwd or self._cwd
                for what, block in self._blocks.feed(event, base + event.end, at, cwd):
                    self._on_block(what, block)
            elif isinstance(event, ModeChanged) and event.mode == "bracketed_paste":
                screen.bracketed_paste = event.on
        if self._marks:
            stale = self.offset - 2 * MAX_OSC_PAYLOAD  # a mark that starts before this is never scanned any more
            self._marks = {pos: at for pos, at in self._marks.items() if pos >= stale}
        screen.feed(data[pos:] if pos else data, self.offset)
        for listener in tuple(self._listeners):
            listener(data)
        screen.output_read(len(data))
        self._on_output()

    def _genuine(self, base: int, nonce_at: int | None) -> float | None:
        """When the holder journaled the genuine mark whose nonce starts at `nonce_at` (relative to `base`), or
        None when no genuine nonce starts there (a program's imitation, or no nonce at all)."""
        return self._marks.get(base + nonce_at) if nonce_at is not None else None

    def subscribe(self, listener: Callable[[bytes], None]) -> Callable[[], None]:
        """Call `listener` with every chunk of output from now on; returns the unsubscribe function."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)
