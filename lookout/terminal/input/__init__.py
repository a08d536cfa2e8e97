"""Input as a terminal receives it: named keys, text and pastes in ordered steps, encoded to bytes.

In: an agent's or a person's input steps. Out: the bytes to write (`steps`, `keys`). Imports nothing above it."""
