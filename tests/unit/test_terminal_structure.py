"""The terminal package's import graph: no cycles, the session's parts never import back up to the session
(or to how one comes to be, or the registry), and no domain module reaches into the HTTP layer or another domain."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import app.terminal
from tests.support.imports import module_imports

PACKAGE = Path(app.terminal.__file__).parent
PARTS = ("terminal_process", "ingest", "screen_model", "lazy_feed")
ABOVE_THE_PARTS = {"app.terminal.session", "app.terminal.origins", "app.terminal.registry"}


def _module(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in module_imports(path) if m in modules and m != name} for name, path in modules.items()}


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
        todo = [f"app.terminal.{part}"]
        while todo:
            module = todo.pop()
            for imported in graph[module] - reached:
                reached.add(imported)
                todo.append(imported)
        assert not reached & ABOVE_THE_PARTS, f"{part} reaches {sorted(reached & ABOVE_THE_PARTS)}"
    importers = {name for name, imported in graph.items() if "app.terminal.session" in imported}
    assert importers == {"app.terminal.registry", "app.terminal.origins", "app.terminal.act"}  # and how one comes to be


def test_terminal_modules_import_no_http_layer_and_no_other_domain() -> None:
    for path in PACKAGE.rglob("*.py"):
        foreign = {
            name for name in module_imports(path)
            if name.split(".")[0] in {"fastapi", "starlette"}
            or name.startswith(("app.api", "app.device", "app.browser"))
            or (name.startswith("app.timeline") and not name.startswith("app.timeline.recording"))
        }  # fmt: skip
        assert not foreign, f"{_module(path)} imports {sorted(foreign)}"


def test_the_holder_imports_only_the_standard_library_and_its_own_package() -> None:
    """Holders outlive the daemon and every upgrade: their code stays small and loads nothing of the rest of
    lookout (as the fork server runs it: without site-packages)."""
    probe = "import sys, app.terminal.holder.server, app.terminal.holder.loop; print('\\n'.join(sys.modules))"
    loaded = subprocess.run([sys.executable, "-S", "-E", "-c", probe], cwd=PACKAGE.parent.parent, capture_output=True,
                            text=True, check=True).stdout.split()  # fmt: skip
    ours = {"app", "app.terminal", "app.terminal.holder"}
    foreign = [
        name for name in loaded
        if name not in ours and not name.startswith("app.terminal.holder.")
        and name.split(".")[0] not in sys.stdlib_module_names and name != "__main__"
    ]  # fmt: skip
    assert not foreign, f"the holder loads {foreign}"
    assert "app.terminal.holder.loop" in loaded
