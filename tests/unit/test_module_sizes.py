"""Small modules: none of the package over 500 lines, the terminal's session under 400 and the pages' budgeted
view under 450 (each grew past its line once; what does not fit is a module of its own)."""
from __future__ import annotations

from pathlib import Path

import lookout

PACKAGE = Path(lookout.__file__).parent
LIMITS = {"terminal/session.py": 400, "browser/snapshot_view.py": 450}


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_no_module_is_over_500_lines() -> None:
    sizes = {path.relative_to(PACKAGE).as_posix(): _lines(path) for path in PACKAGE.rglob("*.py")
             if "node_modules" not in path.parts}  # fmt: skip
    assert not {name: n for name, n in sizes.items() if n > 500}


def test_the_session_and_the_snapshot_view_are_within_their_lines() -> None:
    for name, limit in LIMITS.items():
        assert _lines(PACKAGE / name) < limit, name
