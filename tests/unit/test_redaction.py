"""lookout.core.redaction: the secrets of the addresses lookout is configured with (a remote browser's password
and query tokens, the summariser's key) and secret-shaped text leave lookout masked, whatever text quotes
them (issue 35); what is not secret stays readable."""
from __future__ import annotations

from lookout.core.redaction import REDACTED, Scrubber, url_secrets

ENDPOINT = "wss://someone:pa55%40word@browser.example:3000/chrome?token=tok-0123456789&apiKey=k3y-abcdef&x=1"

PLAYWRIGHT_TEXT = (
    "BrowserType.connect: WebSocket error: wss://someone:pa55%40word@browser.example:3000/chrome 404 Not Found\n"
    "  - <ws preparing> retrieving websocket url from https://someone:pa55@word@browser.example:3000/chrome/"
    "json/version/?token=tok-0123456789&apiKey=k3y-abcdef&x=1."
)


def test_the_secret_parts_of_an_address() -> None:
    found = set(url_secrets(ENDPOINT))
    assert {"someone:pa55%40word", "pa55@word", "tok-0123456789", "k3y-abcdef"} <= found
    assert "1" not in found and "browser.example" not in found
    assert url_secrets("ws://apikey-only-0123@host/") == ["apikey-only-0123"]  # a user without password
    assert url_secrets(None) == [] and url_secrets("ws://host:9/") == []


def test_playwrights_text_quoting_the_address_is_scrubbed() -> None:
    clean = Scrubber(url_secrets(ENDPOINT)).scrub(PLAYWRIGHT_TEXT)
    for secret in ("pa55", "word@", "tok-0123456789", "k3y-abcdef", "someone"):
        assert secret not in clean, (secret, clean)
    assert "browser.example:3000/chrome" in clean and "404 Not Found" in clean and REDACTED in clean


def test_any_urls_user_and_password_and_token_parameters_are_masked_without_being_configured() -> None:
    clean = Scrubber().scrub("from http://u:p@h:1/x and ws://other:secret@10.0.0.1/ws?access_token=zzz&mode=raw")
    assert clean == f"from http://{REDACTED}@h:1/x and ws://{REDACTED}@10.0.0.1/ws?access_token={REDACTED}&mode=raw"


def test_what_is_not_secret_is_kept() -> None:
    text = "navigated to https://shop.example/search?q=shoes&page=2 (mail me at a@b.example); 5 tokens"
    assert Scrubber(["the-api-token-0123456789", "abc"]).scrub(text) == text
