"""The `lookout` command's entry (`python -m lookout` too). Its code is imported with the cyclic collector paused,
then frozen (lookout.core.gc_tuning): what a process imports lives as long as it, and walking it while it grows
cost the daemon's start about 25 ms."""

from __future__ import annotations


def main() -> None:
    from lookout.core.gc_tuning import long_lived

    with long_lived():
        from lookout.cli import main as command
    command()
