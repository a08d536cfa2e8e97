"""Stage 5, waits: server-side waits on a terminal's stream, screen, state and blocks.

In: output text with offsets (`stream_text`), the echo of input (`echo`), blocks and state. Out: a wait's
answer: matched or not, why, and the cursor to resume from (`waiting`). Imports the stages below."""
