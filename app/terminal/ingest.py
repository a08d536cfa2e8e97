"""A terminal's ingest pipeline: what the program writes, in order, from the PTY to every reader.

Each batch of output comes from the journal the terminal's holder writes (app.terminal.journal_follower: as
the program wrote it, with a stand-in for the shell integration's nonce, and as stored), is read by the side
scanner (app.terminal.scanner: title, cwd, shell marks that make command
blocks, modes, and terminal queries, which are answered here), then is queued for the screen model (which
feeds its engine lazily, skipping ahead through floods: app.terminal.lazy_feed) and handed to the output
listeners (live streams).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.terminal.blocks import Block, BlockTracker
from app.terminal.scanner import CwdChanged, ModeChanged, Query, ShellMark, SideScanner, TitleChanged, query_reply
from app.terminal.screen_model import ScreenModel

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
        answer_from: int = 0,
    ) -> None:
        """`cwd`: where the program started (a block's cwd until the shell reports one)."""
        self.offset = offset
        self.reported_cwd: str | None = None
        self._screen = screen
        self._blocks = blocks
        self._cwd = cwd
        self._answer = answer
        self._on_block = on_block
        self._on_output = on_output
        self._scanner = SideScanner()
        self.answer_from = answer_from
        self._listeners: set[Callable[[bytes], None]] = set()

    def feed(self, data: bytes, shown: bytes) -> None:
        """Take the next output: as the program wrote it (for the scanner) and as stored (for the screen and
        the listeners)."""
        if not shown:
            return
        screen = self._screen
        base = self.offset
        self.offset += len(shown)
        pos = 0
        for event in self._scanner.feed(data):
            if isinstance(event, Query):
                screen.feed(shown[pos : event.end], self.offset)
                pos = event.end
                if base + event.end > self.answer_from:
                    cur = screen.current().cursor()
                    self._answer(query_reply(event.kind, cur.row, cur.col))
            elif isinstance(event, TitleChanged):
                screen.title = event.title
            elif isinstance(event, CwdChanged):
                if self._blocks.trusts_cwd(event.nonce):
                    self.reported_cwd = event.path
            elif isinstance(event, ShellMark):
                cwd = self.reported_cwd or self._cwd
                for what, block in self._blocks.feed(event, base + event.end, time.time(), cwd):
                    self._on_block(what, block)
            elif isinstance(event, ModeChanged) and event.mode == "bracketed_paste":
                screen.bracketed_paste = event.on
        screen.feed(shown[pos:] if pos else shown, self.offset)
        for listener in tuple(self._listeners):
            listener(shown)
        screen.output_read(len(data))
        self._on_output()

    def subscribe(self, listener: Callable[[bytes], None]) -> Callable[[], None]:
        """Call `listener` with every chunk of output from now on; returns the unsubscribe function."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)
