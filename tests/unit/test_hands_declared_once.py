"""Who sent an input, whose a command block is and what an answer says of other hands is declared once, in
lookout/core/hands.py: no other module defines a function or class of its names or words its notice, and the
terminal's inputs, its waits and the pages' hands use it."""
from __future__ import annotations

import ast
from pathlib import Path

import lookout
from tests.support.imports import module_imports

PACKAGE = Path(lookout.__file__).parent
RULE = PACKAGE / "core" / "hands.py"


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}


def _modules() -> list[Path]:
    return [path for path in PACKAGE.rglob("*.py") if "node_modules" not in path.parts]


def test_no_module_but_the_rule_defines_its_names_or_words_its_notice() -> None:
    names = {name for name in _defined(RULE) if not name.startswith("_")}
    assert {"Ledger", "standing", "notice_line"} <= names
    for path in _modules():
        if path == RULE:
            continue
        twins = names & _defined(path)
        assert not twins, f"{path} defines {sorted(twins)} again (declared in lookout/core/hands.py)"
        assert "another hand wrote to this terminal" not in path.read_text(), f"{path} words the notice again"


def test_the_inputs_the_waits_and_the_mcp_text_use_the_rule() -> None:
    users = {path.relative_to(PACKAGE.parent).as_posix() for path in _modules()
             if any(name.startswith("lookout.core.hands") for name in module_imports(path))}  # fmt: skip
    assert {"lookout/terminal/hand_inputs.py", "lookout/terminal/waits/hands.py", "lookout/clients/mcp/lease_tools.py"} <= users, users
