"""`python -m app` is the `lookout` command."""

from app.launch import main

main()
