"""The terminal package's import graph: its sub-packages are the stages of a byte's path and each imports only the
stages below it, no cycles, the session's parts never import back up to the session (or to how one comes to be, or
the registry), and no domain module reaches into the HTTP layer or another domain."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lookout.terminal
from tests.support.imports import module_imports

PACKAGE = Path(lookout.terminal.__file__).parent
PARTS = ("process.program", "ingest", "screen.model", "screen.lazy_feed")
# each stage and the stages it may import (the holder is below all of them; the modules at the top may import all)
STAGES: dict[str, set[str]] = {
    "holder": set(),
    "journal": {"holder"},
    "process": {"holder", "journal"},
    "screen": {"holder", "journal"},
    "input": set(),
    "blocks": {"holder", "journal", "screen"},
    "waits": {"holder", "journal", "process", "screen", "input", "blocks"},
}
ABOVE_THE_PARTS = {
    "lookout.terminal.session", "lookout.terminal.origins", "lookout.terminal.registry", "lookout.terminal.dormant",
    "lookout.terminal.adoptions", "lookout.terminal.read_ahead",
}


def _module(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in module_imports(path) if m in modules and m != name} for name, path in modules.items()}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in STAGES else None


def test_each_stage_imports_only_the_stages_below_it() -> None:
    found = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert found == set(STAGES), f"sub-packages {sorted(found)} are not the stages {sorted(STAGES)}"
    for module, imported in _graph().items():
        if (stage := _stage(module)) is None:
            continue
        above = {name for name in imported if _stage(name) not in (stage, *STAGES[stage])}
        assert not above, f"{module} (stage {stage}) imports {sorted(above)}"


def test_each_stage_says_what_enters_and_what_leaves_it() -> None:
    for stage in STAGES:
        doc = (PACKAGE / stage / "__init__.py").read_text()
        assert doc.startswith('"""') and len(doc.splitlines()) >= 2, f"{stage} has no docstring of a few lines"


def test_the_terminal_package_has_no_import_cycle() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, "import cycle: " + " -> ".join((*path[path.index(module):], module))
        if module in done:
            return
        for imported in graph[module]:
            visit(imported, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_the_session_parts_do_not_import_the_session_or_the_registry() -> None:
    graph = _graph()
    for part in PARTS:
        reached: set[str] = set()
        todo = [f"lookout.terminal.{part}"]
        while todo:
            module = todo.pop()
            for imported in graph[module] - reached:
                reached.add(imported)
                todo.append(imported)
        assert not reached & ABOVE_THE_PARTS, f"{part} reaches {sorted(reached & ABOVE_THE_PARTS)}"
    importers = {name for name, imported in graph.items() if "lookout.terminal.session" in imported}
    # the registry, how one comes to be, an agent step, the records of exited terminals let go, and the
    # adoptions after a start
    assert importers == {"lookout.terminal.registry", "lookout.terminal.origins", "lookout.terminal.act",
                         "lookout.terminal.dormant", "lookout.terminal.adoptions"}  # fmt: skip


def test_terminal_modules_import_no_http_layer_and_no_other_domain() -> None:
    for path in PACKAGE.rglob("*.py"):
        foreign = {
            name for name in module_imports(path)
            if name.split(".")[0] in {"fastapi", "starlette"}
            or name.startswith(("lookout.api", "lookout.device", "lookout.browser"))
            or (name.startswith("lookout.timeline") and not name.startswith("lookout.timeline.recording"))
        }  # fmt: skip
        assert not foreign, f"{_module(path)} imports {sorted(foreign)}"


def test_the_holder_imports_only_the_standard_library_and_its_own_package() -> None:
    """Holders outlive the daemon and every upgrade: their code stays small and loads nothing of the rest of
    lookout (as the fork server runs it: without site-packages)."""
    probe = "import sys, lookout.terminal.holder.server, lookout.terminal.holder.loop; print('\\n'.join(sys.modules))"
    loaded = subprocess.run([sys.executable, "-S", "-E", "-c", probe], cwd=PACKAGE.parent.parent, capture_output=True,
                            text=True, check=True).stdout.split()  # fmt: skip
    ours = {"lookout", "lookout.terminal", "lookout.terminal.holder"}
    foreign = [
        name for name in loaded
        if name not in ours and not name.startswith("lookout.terminal.holder.")
        and name.split(".")[0] not in sys.stdlib_module_names and name != "__main__"
    ]  # fmt: skip
    assert not foreign, f"the holder loads {foreign}"
    assert "lookout.terminal.holder.loop" in loaded
