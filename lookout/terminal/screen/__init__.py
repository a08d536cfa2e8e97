"""Stage 3, the screen: raw output turned into a screen model and the views an agent reads.

In: journaled bytes in order. Out: marks and queries found by the side scanner (`scanner`), engine feeding with
skip-ahead (`lazy_feed`, `skip_ahead`, `sequence_boundary`), the screen model with deltas and checkpoints
(`model`), the layered screenshot (`layers`, `cell_layers`, `palette`, `view`), the screen at any offset
(`replay`, `frame_screens`). Engines live in `engines/`. Imports the journal stage only."""
