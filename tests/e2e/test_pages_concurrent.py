"""Every page route answers under concurrent use (the daemon a subprocess, real Chromium): listings while
another client opens and closes pages are all 200 on one kept-alive connection, never a 500 or a reset."""

from __future__ import annotations

import threading

from tests.conftest import Daemon


def test_listings_while_another_client_opens_and_closes_pages_are_all_200(daemon: Daemon) -> None:
    listed: list[int] = []
    churned: list[int] = []
    done = threading.Event()

    def churn() -> None:  # open and close pages for as long as the listings go on
        with daemon.client(timeout=60) as api:
            while not done.is_set():
                opened = api.post("/v1/pages", json={"url": "about:blank"})
                churned.append(opened.status_code)
                if opened.status_code == 201:
                    churned.append(api.delete(f"/v1/pages/{opened.json()['id']}").status_code)

    with daemon.client(timeout=60) as api:
        assert api.post("/v1/pages", json={"url": "about:blank"}).status_code == 201  # the browser is up
        worker = threading.Thread(target=churn)
        worker.start()
        try:
            for _ in range(300):  # one client, one kept-alive connection: a reset would raise here
                answer = api.get("/v1/pages")
                listed.append(answer.status_code)
                assert all(isinstance(p["id"], str) for p in answer.json()["pages"])
        finally:
            done.set()
            worker.join(120)
    assert listed == [200] * 300
    assert churned and set(churned) <= {200, 201}, churned
    assert len(churned) >= 4, "pages were opened and closed while the listings ran"
