"""lookout: terminals, devices and pages for AI agents, seen in compact, token-budgeted form."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lookout")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0"
