"""The device and browser packages, like the terminal's (test_terminal_structure), import no HTTP layer and
no other domain, and their resources sit below their registries; lookout.core imports no domain at all."""
from __future__ import annotations

from pathlib import Path

import pytest

import lookout.browser
import lookout.core
import lookout.device
from tests.support.imports import module_imports

DOMAINS = {"lookout.device": lookout.device, "lookout.browser": lookout.browser}


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_domain_modules_import_no_http_layer_and_no_other_domain(name: str) -> None:
    others = tuple(f"app.{d}" for d in ("api", "terminal", "device", "browser") if f"app.{d}" != name)
    for path in Path(DOMAINS[name].__file__).parent.rglob("*.py"):
        foreign = {
            imported for imported in module_imports(path)
            if imported.split(".")[0] in {"fastapi", "starlette"} or imported.startswith(others)
            or (imported.startswith("lookout.timeline") and not imported.startswith("lookout.timeline.recording"))
        }  # fmt: skip
        assert not foreign, f"{path.name} of {name} imports {sorted(foreign)}"


def test_the_device_resource_does_not_import_its_registry() -> None:
    assert "lookout.device.registry" not in module_imports(Path(lookout.device.__file__).parent / "device.py")


def test_core_imports_no_domain_and_no_http_layer() -> None:
    for path in Path(lookout.core.__file__).parent.rglob("*.py"):
        foreign = {i for i in module_imports(path) if i.startswith(("lookout.api", "lookout.terminal", "lookout.device", "lookout.browser",
                                                                   "lookout.timeline", "fastapi"))}  # fmt: skip
        assert not foreign, f"{path.name} imports {sorted(foreign)}"
