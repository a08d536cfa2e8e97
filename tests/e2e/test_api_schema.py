"""schemathesis against lookout's own OpenAPI schema, on the daemon as a subprocess: for generated requests
to every operation, no 5xx, and every answer matches the schema (status codes, content types, bodies).
Not checked: that every schema-valid request is accepted, since some rules are not in the schema (a tap
takes x and y or an element; `to` is not before `from`): those requests get a clear 400 or 422.

Operations that start programs or browsers from generated input are left out (POST /v1/terminals would
run generated command lines, POST /v1/pages would open generated URLs); a terminal and a page made here
give the other operations something real to find, besides the generated ids they reject.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.conftest import Daemon

MAX_EXAMPLES = 40
SPAWNING = ("POST /v1/terminals", "POST /v1/pages")


@pytest.fixture
def live(adb_daemon: Daemon, adb_api: httpx.Client, make_device: Callable[..., Any]) -> Daemon:
    """The daemon with a real adb server and one fake device, and a terminal running `cat`."""
    make_device()
    adb_api.post("/v1/terminals", json={"command": ["cat"], "cols": 40, "rows": 10}).raise_for_status()
    return adb_daemon


def test_no_server_error_and_answers_match_the_schema(live: Daemon) -> None:
    auth = {"Authorization": f"Bearer {live.token}"}
    loaded = schemathesis.openapi.from_url(f"{live.url}/openapi.json", headers=auth)
    failures: dict[str, str] = {}
    checked = []
    for found in loaded.get_all_operations():
        operation = found.ok()
        label = f"{operation.method.upper()} {operation.path}"
        if label in SPAWNING:
            continue
        checked.append(label)

        @given(case=operation.as_strategy())
        @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case: schemathesis.Case) -> None:
            response = case.call(base_url=live.url, headers=auth, timeout=60)
            case.validate_response(response, excluded_checks=[positive_data_acceptance])

        try:
            check()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 (schemathesis raises groups: collect every operation's, report all)
            failures[label] = str(exc)[:3000]
    assert len(checked) >= 30, checked
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
