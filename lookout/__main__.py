"""`python -m lookout` is the `lookout` command."""

from lookout.launch import main

main()
