"""Stage 1, the journal: every byte the program wrote, as the holder put it on disk, and the terminal's other files.

In: `output.raw` and `output.idx` written by the holder (lookout.terminal.holder), the daemon's facts to keep.
Out: bytes from any offset in order (`follower`, `reader`), meta/snapshot/events/checkpoints (`persistence`),
screen deltas by cursor (`deltas`), asciicast recordings (`recording`), replay archives checked (`archived`).
Imports only the holder's constants."""
