"""A terminal's ingest pipeline: what the program writes, in order, from the PTY to every reader.

Each batch of output has the shell integration's nonce masked (app.terminal.shell_integration), is stored in
the journal, is read by the side scanner (app.terminal.scanner: title, cwd, shell marks that make command
blocks, modes, and terminal queries, which are answered here), then is queued for the screen model (which
feeds its engine lazily, skipping ahead through floods: app.terminal.lazy_feed) and handed to the output
listeners (live streams).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.terminal.blocks import Block, BlockTracker
from app.terminal.journal import JournalWriter
from app.terminal.scanner import CwdChanged, ModeChanged, Query, ShellMark, SideScanner, TitleChanged, query_reply
from app.terminal.screen_model import ScreenModel
from app.terminal.shell_integration import NonceFilter

BlockSink = Callable[[str, Block], None]
"""on_block("started" | "ended", block)"""


class Ingest:
    """The pipeline of one live terminal. `answer` writes a reply to a terminal query ahead of queued
    input; `on_block` hears of blocks that start and end; `on_output` is called after each batch."""

    def __init__(
        self,
        journal: JournalWriter,
        screen: ScreenModel,
        blocks: BlockTracker,
        *,
        nonce: str | None,
        cwd: str,
        answer: Callable[[bytes], None],
        on_block: BlockSink,
        on_output: Callable[[], None],
    ) -> None:
        """`cwd`: where the program started (a block's cwd until the shell reports one)."""
        self.journal = journal
        self.reported_cwd: str | None = None
        self._screen = screen
        self._blocks = blocks
        self._cwd = cwd
        self._answer = answer
        self._on_block = on_block
        self._on_output = on_output
        self._scanner = SideScanner()
        self._nonce_filter = NonceFilter(nonce) if nonce else None
        self._listeners: set[Callable[[bytes], None]] = set()

    def feed(self, data: bytes, final: bool = False) -> None:
        """Take output read from the PTY (`final`: the last of it). The scanner reads it as is; everything
        else (journal, screen, listeners) gets it with the shell integration's nonce masked."""
        shown = data
        if self._nonce_filter is not None:
            data, shown = self._nonce_filter.feed(data, final)
        if not data:
            return
        journal, screen = self.journal, self._screen
        base = journal.size
        journal.write_output(shown)
        pos = 0
        for event in self._scanner.feed(data):
            if isinstance(event, Query):
                screen.feed(shown[pos : event.end], journal.size)
                pos = event.end
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
        screen.feed(shown[pos:] if pos else shown, journal.size)
        for listener in tuple(self._listeners):
            listener(shown)
        screen.output_read(len(data))
        self._on_output()

    def subscribe(self, listener: Callable[[bytes], None]) -> Callable[[], None]:
        """Call `listener` with every chunk of output from now on; returns the unsubscribe function."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)
