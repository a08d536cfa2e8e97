"""The test suite's own layout: test modules share helpers through tests/support (never by importing one
another), the slow suites are marked so that `make test-fast` (`pytest -m "not slow"`) is the unit suite, and
the tests run in a HOME of their own."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, SLOW_SUITES, TEST_HOME
from tests.support.imports import module_imports

TESTS = REPO / "tests"


def test_test_modules_import_helpers_only_from_tests_support_and_the_root_conftest() -> None:
    for path in TESTS.rglob("*.py"):
        if "support" in path.relative_to(TESTS).parts:
            continue
        borrowed = {
            name for name in module_imports(path)
            if name.startswith("tests.") and not name.startswith(("tests.support", "tests.conftest"))
        }  # fmt: skip
        assert not borrowed, f"{path.relative_to(REPO)} imports {sorted(borrowed)}: move what it shares to tests/support"


def _collected(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    return {line.split(": ")[0] for line in done.stdout.splitlines() if line.startswith("tests/")}  # "file: count"


def test_the_slow_marker_selects_the_slow_suites_and_leaves_the_unit_tests() -> None:
    assert {path.name for path in TESTS.iterdir() if path.is_dir()} >= {"unit", *SLOW_SUITES}
    files = ["tests/unit/test_keys.py", "tests/e2e/test_mcp_http.py", "tests/security/test_sec_patterns.py",
             "tests/integration/test_terminal_waits.py"]  # fmt: skip
    assert _collected("-m", "not slow", *files) == {"tests/unit/test_keys.py"}
    assert _collected("-m", "slow", *files) == set(files[1:])


RC_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshenv", ".zprofile", ".zshrc", ".zlogin")


def test_the_tests_run_in_a_home_of_their_own_with_no_rc_file() -> None:
    assert os.environ["HOME"] == str(TEST_HOME) and Path.home() == TEST_HOME
    assert not [name for name in RC_FILES if (TEST_HOME / name).exists()], "a test wrote an rc file into the run's HOME"
