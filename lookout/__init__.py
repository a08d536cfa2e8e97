"""lookout: terminals, devices and pages for AI agents, seen in compact, token-budgeted form."""

from __future__ import annotations

from functools import cache


def __getattr__(name: str) -> str:
    """`__version__`, looked up on first use: importing the package stays cheap (a terminal's holder imports
    it and runs for as long as its program does; importlib.metadata alone costs it 4 MB)."""
    if name == "__version__":
        return _version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lookout")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0.0.0"
