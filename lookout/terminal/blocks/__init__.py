"""Stage 4, command blocks: one per command line an integrated shell ran, from its OSC 133/633 marks.

In: the scanner's marks with their raw offsets. Out: blocks with command, cwd, exit code and byte range
(`blocks`), and a block's output as an agent reads it (`output`). Imports the journal and screen stages."""
