"""Stage 2, the program's process: its holder link, its tty, its state and how it is stopped.

In: a terminal's spec (command, size, env) and the holder's control socket. Out: a running program followed
through its holder (`program`, `holder_link`), the termios/foreground facts (`tty`, `state`), the stop ladder
(`ladder`), the shell integration's launch (`shell_integration`), and the holders of a data dir seen without a
daemon (`holders`). Imports the journal stage and the holder only."""
