"""`python -m app` is the `lookout` command."""

from app.cli import main

main()
