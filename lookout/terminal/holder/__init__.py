"""The holder: the small process that owns one terminal's PTY and program, apart from the daemon, and writes
its journal (the dtach model: one holder per terminal; docs/terminals.md says why).

Holders outlive the daemon and every upgrade of lookout on disk, so this package stays small and stable: it
imports only the standard library and its own modules (a test holds it to that), never the rest of `app`.

- `server`: the fork server (`python -m lookout.terminal.holder`): it has imported the holder's code once and
  forks one holder per terminal, so a holder costs what its own pages cost, not an interpreter's start;
- `loop`: a holder's event loop (PTY output to the journal, input from its clients, the stop ladder);
- `pty`: starting the program on a new PTY, and signalling its session;
- `protocol`: what the daemon and a holder say to each other over the holder's socket;
- `journal`: the journal's writer (`output.raw`, `output.idx`) and its format;
- `nonce`: masking the shell integration's nonce before any byte is stored;
- `sizes`: the terminal sizes lookout accepts anywhere (API, holder, journal, screen engines).
"""
