"""Browser profiles (issue: agents and logins that outlive the daemon): a login made in a profile page on the
real login form of Django's admin, served on 127.0.0.1, survives the page's close and a restart of the
daemon; a page without a profile is not logged in; a profile's storage state exported from one daemon and
imported into another logs that one in too. Profile names that could be paths are refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Daemon
from tests.support.pages import ref_of
from tests.support.real_pages import DJANGO_PASSWORD, DJANGO_USER, make_django_site, serve_django


@pytest.fixture(scope="module")
def django(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_django(make_django_site(tmp_path_factory.mktemp("django"), rows=5)) as url:
        yield url


def _open(api: httpx.Client, url: str, profile: str | None = None) -> dict:
    body: dict = {"url": url, **({"profile": profile} if profile else {})}
    r = api.post("/v1/pages", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _logged_in(api: httpx.Client, base: str, profile: str | None) -> bool:
    """Whether /admin/ opens as the admin (a login page otherwise); the page is closed again."""
    page = _open(api, f"{base}/admin/", profile)
    text = api.post(f"/v1/pages/{page['id']}/snapshot", json={"full": True}).json()["text"]
    assert api.delete(f"/v1/pages/{page['id']}").status_code == 200
    return "Log out" in text and "Site administration" in text


def _log_in(api: httpx.Client, base: str, profile: str) -> None:
    page = _open(api, f"{base}/admin/login/?next=/admin/", profile)["id"]
    snap = api.post(f"/v1/pages/{page}/snapshot").json()["text"]
    for label, value in (("Username", DJANGO_USER), ("Password", DJANGO_PASSWORD)):
        act = {"action": "fill", "ref": ref_of(snap, f'- textbox "{label}'), "text": value}
        assert api.post(f"/v1/pages/{page}/action", json=act).status_code == 200
    done = api.post(f"/v1/pages/{page}/action", json={"action": "click", "ref": ref_of(snap, '- button "Log in"')})
    assert done.status_code == 200, done.text
    assert api.delete(f"/v1/pages/{page}").status_code == 200


def test_a_login_in_a_profile_survives_the_page_and_a_restart(tmp_path: Path, django: str) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client(timeout=120) as api:
        _log_in(api, django, "work")
        assert _logged_in(api, django, "work"), "the profile keeps the login after its page closed"
        assert not _logged_in(api, django, None), "a page without a profile is isolated"
        listed = api.get("/v1/profiles").json()["profiles"]
        assert [p["name"] for p in listed] == ["work"] and listed[0]["open_pages"] == []
    d.stop()
    folder = tmp_path / "data" / "profiles" / "work"
    assert folder.stat().st_mode & 0o777 == 0o700
    d.start()
    with d.client(timeout=120) as api:
        assert _logged_in(api, django, "work"), "the login survives the daemon's restart"
        state = api.get("/v1/profiles/work/storage").json()
        assert any(c["name"] == "sessionid" for c in state["cookies"])
    d.finish()

    other = Daemon(tmp_path / "other").start()
    with other.client(timeout=120) as api:
        assert not _logged_in(api, django, "handed"), "a new profile starts logged out"
        taken = api.put("/v1/profiles/handed/storage", json=state)
        assert taken.status_code == 200 and taken.json()["cookies"] == len(state["cookies"]), taken.text
        assert _logged_in(api, django, "handed"), "the imported storage state logs the other daemon in"
        assert api.delete("/v1/profiles/handed").status_code == 200
        assert api.get("/v1/profiles").json()["profiles"] == []
    other.finish()


@pytest.mark.parametrize("name", ["a/b", "..", ".", "a\x00b", "x" * 500, "", "-lead", "sp ace"])
def test_a_profile_name_that_could_be_a_path_is_a_400(api: httpx.Client, name: str) -> None:
    r = api.post("/v1/pages", json={"profile": name})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_input", r.text
    assert "profile" in r.json()["error"]["message"]


def test_profile_routes_refuse_bad_names_and_unknown_profiles(api: httpx.Client) -> None:
    assert api.get("/v1/profiles/..%2F..%2Fetc/storage").status_code in (400, 404)
    assert api.get("/v1/profiles/%2E%2E/storage").status_code == 400
    assert api.get("/v1/profiles/a%00b/storage").status_code == 400
    assert api.get("/v1/profiles/nobody/storage").status_code == 404
    assert api.delete("/v1/profiles/nobody").status_code == 404
    bad = api.put("/v1/profiles/x/storage", json={"cookies": "not a list"})
    assert bad.status_code == 400, bad.text
