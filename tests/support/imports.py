"""What a source file imports, read from its syntax tree (for the tests of the package's structure)."""
from __future__ import annotations

import ast
from pathlib import Path


def module_imports(path: Path) -> set[str]:
    """The modules `path` imports anywhere in it (`from a import b` counts as a.b too, for when b is a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names
