"""Every third-party module that lookout/ and lookout/clients/ import (in functions too) comes from a distribution named in
`[project].dependencies`, not from the test extra or from another package's dependencies. The same check
run for real, in a venv installed without the test extra, is `make check`'s (tests/support/runtime_install.py);
this one reads the sources and answers in a second."""
from __future__ import annotations

import importlib.util
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location("check_imports", REPO / "deploy" / "check_imports.py")
assert _spec and _spec.loader
check_imports = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_imports)


def _third_party_imports() -> dict[str, set[Path]]:
    """Top-level module name -> the source files that import it."""
    found: dict[str, set[Path]] = {}
    for package in check_imports.PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if "node_modules" in path.parts:
                continue
            for name in check_imports.imported_names(path.read_text()):
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in check_imports.PACKAGES:
                    found.setdefault(top, set()).add(path.relative_to(REPO))
    return found


def test_imports_inside_functions_and_outside_type_checking_are_found() -> None:
    source = "import a.b\nfrom c import d\nfrom . import e\nif TYPE_CHECKING:\n    import f\nelse:\n    import g\n" \
             "def h():\n    import i\n"  # fmt: skip
    assert check_imports.imported_names(source) == {"a.b", "c", "g", "i"}


def test_every_third_party_import_is_a_declared_runtime_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {canonicalize_name(Requirement(spec).name) for spec in project["dependencies"]}
    providers = packages_distributions()
    imports = _third_party_imports()
    assert {"fastapi", "mcp", "httpx"} <= set(imports)
    undeclared = {}
    for top, files in imports.items():
        distributions = {canonicalize_name(d) for d in providers.get(top, [])}
        if not distributions & declared:
            undeclared[top] = (sorted(distributions), sorted(map(str, files)))
    assert not undeclared, f"imported by the package but not in [project].dependencies: {undeclared}"
