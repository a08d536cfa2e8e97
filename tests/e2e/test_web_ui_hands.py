"""The web UI's terminal view in a real headless Chromium with other hands on the terminal (issue 44): a person
typing in the card while an agent acts, and the view's own answers arriving late around the program's end."""
from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from playwright.sync_api import APIResponse, Browser, Route, expect

from tests.conftest import Daemon
from tests.support.hands import GATE
from tests.support.polling import eventually
from tests.support.web_ui import browser, daemon_terminal, open_ui, rows  # noqa: F401 (browser: a fixture)


def test_a_person_typing_in_the_card_while_an_agent_acts_is_named_in_the_agents_own_answer(
    browser: Browser, daemon: Daemon, tmp_path: Path
) -> None:
    """Issue 44: a person types a command into the terminal card (the card's stream is the hand "web-ui") while
    an agent's `act` waits for its own command's end; the agent's answer is its own block and exit code and names
    "web-ui" in `other_hands`; the person's line, typed ahead, is its own block, credited to web-ui."""
    tid = daemon_terminal(daemon, tmp_path)
    page, errors = open_ui(browser, daemon)
    page.evaluate(f"location.hash = '#/terminals/{tid}'")
    expect(page.locator("[data-state]")).to_have_text("idle", timeout=15000)
    line, typed = f"echo RUN-$((1+1)); {GATE}; (exit 9)", "echo PERSON-$((5*5)); (exit 2)"
    body = {"input": {"text": line, "keys": ["Enter"]}, "until": {"block_end": True}, "timeout_ms": 60_000, "detail": True}
    agent = {"X-Lookout-Agent": "agent-A"}
    with daemon.client(timeout=90) as api, ThreadPoolExecutor(1) as pool:
        acting = pool.submit(api.post, f"/v1/terminals/{tid}/act", json=body, headers=agent)
        expect(rows(page)).to_contain_text("RUN-2", timeout=15000)  # the agent's command runs
        page.locator(".xterm-host").click()
        page.keyboard.type(typed)
        page.keyboard.press("Enter")
        expect(rows(page)).to_contain_text("(exit 2)")  # the person's keys reached the terminal
        (tmp_path / "gate").touch()
        answer = acting.result()
    assert answer.status_code == 200, answer.text
    act = answer.json()
    assert act["exit_code"] == 9 and act["wait"]["block"]["command"] == line, act
    assert act["wait"]["block"]["hand"] == "agent-A" and "standing" not in act["wait"], act
    assert {i["hand"] for i in act["other_hands"]} == {"web-ui"}, act
    assert "another hand wrote to this terminal while your call ran: web-ui" in act["note"]
    person = page.locator(".card").filter(has=page.locator("header code", has_text="echo PERSON-"))
    person = person.locator("[data-exit-code]")
    expect(person).to_have_text("exit 2", timeout=15000)
    for hand, (own, code), other in (("web-ui", (typed, 2), line), ("agent-A", (line, 9), typed)):
        with daemon.client() as api:
            params = {"agent": hand, "resource": f"terminal:{tid}"}
            context = api.get("/v1/timeline/context", params=params, headers={"X-Lookout-Agent": hand}).json()
        text = "\n".join(m["content"] for m in context["messages"])
        assert f"`{own}` exited {code}" in text and f"`{other}` exited" not in text, text  # its own commands
    assert not errors, errors


def test_an_answer_sent_before_the_program_ended_does_not_put_back_running(
    browser: Browser, daemon: Daemon, tmp_path: Path
) -> None:
    """The view's poll of the terminal answered while a command ran, but delivered after the program's end (the
    stream's exit message and a fresh poll): the view keeps saying the program exited (it said "Running: ..."
    for good before)."""
    tid = daemon_terminal(daemon, tmp_path)
    page, errors = open_ui(browser, daemon)
    page.evaluate(f"location.hash = '#/terminals/{tid}'")
    live = page.get_by_role("region", name="Live terminal and input")
    command = f"{GATE}; exit 3"
    with daemon.client() as api:
        api.post(f"/v1/terminals/{tid}/input", json={"text": command, "keys": ["Enter"]}).raise_for_status()
    expect(live).to_contain_text(f"Running: {command}", timeout=15000)
    held: list[tuple[Route, APIResponse]] = []

    def hold_one(route: Route) -> None:
        if held or route.request.method != "GET":
            route.continue_()
            return
        held.append((route, route.fetch()))  # answered now (the command runs), delivered later

    page.route(re.compile(rf"/v1/terminals/{tid}$"), hold_one)
    eventually(lambda: page.wait_for_timeout(50) or bool(held), what="a poll of the terminal to be held")
    (tmp_path / "gate").touch()
    expect(live).to_contain_text("The program exited (code 3)", timeout=15000)
    route, stale = held[0]
    assert stale.json()["status"] == "running" and stale.json()["block"]["command"] == command
    with page.expect_response(lambda r: r.url.endswith(f"/v1/terminals/{tid}") and r.request.method == "GET"):
        route.fulfill(response=stale)  # the stale answer lands; the next poll's answer comes after it
    with page.expect_response(lambda r: r.url.endswith(f"/v1/terminals/{tid}") and r.request.method == "GET"):
        pass
    expect(live).to_contain_text("The program exited (code 3)")
    expect(live).not_to_contain_text("Running:")
    assert not errors, errors
