"""Imports every module of an installed lookout (`lookout`) and every module their code imports, also
the ones imported only inside a function on first use: it fails, naming each module that cannot be imported,
when a runtime dependency is missing from `[project].dependencies`.

Run it with the interpreter of the environment to check, from outside the source tree (there, `import lookout`
would find the sources instead of the installed package): the Dockerfile's build runs it, and so does
`make check` in a throwaway venv made without the test extra (tests/support/runtime_install.py).
Standard library only: it checks an environment, it must not need one.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import site
import sys
import traceback
from pathlib import Path

PACKAGES = ("lookout",)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(source: str) -> set[str]:
    """The absolute module names a source file imports anywhere (in functions too), except under
    `if TYPE_CHECKING:` (those are for the type checker only)."""
    names: set[str] = set()
    pending: list[ast.AST] = [ast.parse(source)]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        pending.extend(ast.iter_child_nodes(node))
    return names


def _modules(package: str) -> list[str]:
    root = importlib.import_module(package)
    found = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        if info.name.rsplit(".", 1)[-1] != "__main__":  # running it would start the program
            found.append(info.name)
    return found


def _try(name: str, failures: dict[str, str]) -> object | None:
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - every failure is reported, with its module
        failures[name] = traceback.format_exc(limit=1).strip().splitlines()[-1]
        return None


def main() -> int:
    installed = [Path(path).resolve() for path in site.getsitepackages()]
    failures: dict[str, str] = {}
    wanted: set[str] = set()
    for package in PACKAGES:
        location = Path(importlib.import_module(package).__file__ or "").resolve()
        if not any(path in location.parents for path in installed):
            print(f"{package} is imported from {location}, not from an installed package: run this outside the"
                  " source tree")  # fmt: skip
            return 2
        for name in _modules(package):
            module = _try(name, failures)
            path = getattr(module, "__file__", None)
            if path and path.endswith(".py"):
                wanted |= imported_names(Path(path).read_text())
    for name in sorted(wanted):
        if name.split(".")[0] not in PACKAGES and name not in sys.modules:
            _try(name, failures)
    for name, error in sorted(failures.items()):
        print(f"cannot import {name}: {error}")
    ours = sum(1 for name in sys.modules if name.split(".")[0] in PACKAGES)
    others = len({name.split(".")[0] for name in wanted} - set(PACKAGES))
    where = Path(importlib.import_module(PACKAGES[0]).__file__ or "").parent.parent
    print(f"{'FAILED' if failures else 'ok'}: {ours} modules of {' and '.join(PACKAGES)} from {where} and the"
          f" {others} top-level modules they import; {len(failures)} failed")  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
