"""The `lookout` command's entry (`python -m app` too). Its code is imported with the cyclic collector paused,
then frozen (app.core.gc_tuning): what a process imports lives as long as it, and walking it while it grows
cost the daemon's start about 25 ms."""

from __future__ import annotations


def main() -> None:
    from app.core.gc_tuning import long_lived

    with long_lived():
        from app.cli import main as command
    command()
