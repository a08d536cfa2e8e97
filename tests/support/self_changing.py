"""Pages that change themselves at a moment the test chooses, in ways no document mutation observer sees.

Each page waits on a long-poll (`GET /wait/<kind>`); `release(kind)` answers it, the page makes its change
and then says so (`GET /applied/<kind>`), which `applied(kind)` waits for. Nothing goes through lookout.
`KINDS` maps each kind to its page's body, the script that changes it, and a text the change makes appear
(`new`) or go (`gone`) in a snapshot (`viewport_only`: the change is what is on screen, not what exists).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Kind:
    body: str
    change: str
    new: str | None = None
    gone: str | None = None
    viewport_only: bool = False


_HOST = "<div id='h'></div><script>const root = h.attachShadow({mode: 'open'});</script>"
_STEADY = "<nav aria-label='Sections'>" + " ".join(f"<a href='/s{i}'>Section {i}</a>" for i in range(12)) + "</nav>"
"""What does not change on every page (so a diff against the first snapshot is a diff, not a full snapshot)."""
_ROWS = "".join(f"<div style='height:20px'>Row {i}</div>" for i in range(600))

KINDS: dict[str, Kind] = {
    "insert_rule": Kind("<style></style><button id='b'>Buy now</button>",
                        "document.styleSheets[0].insertRule('#b { display: none }')", gone="Buy now"),
    "rule_style": Kind("<style>#b { color: red }</style><button id='b'>Buy now</button>",
                       "document.styleSheets[0].cssRules[0].style.display = 'none'", gone="Buy now"),
    "delete_rule": Kind("<style>#b { display: none }</style><button id='b'>Buy now</button>",
                        "document.styleSheets[0].deleteRule(0)", new="Buy now"),
    "adopted_sheet": Kind("<button id='b'>Buy now</button>",
                          "const s = new CSSStyleSheet(); s.replaceSync('#b { display: none }');"
                          " document.adoptedStyleSheets = [s]", gone="Buy now"),
    "replace_sync": Kind("<button id='b'>Buy now</button><script>window.s = new CSSStyleSheet();"
                         " document.adoptedStyleSheets = [s];</script>",
                         "s.replaceSync('#b { display: none }')", gone="Buy now"),
    "shadow_adopted_sheet": Kind(_HOST + "<script>root.innerHTML = '<button>Buy now</button>';</script>",
                                 "const s = new CSSStyleSheet(); s.replaceSync('button { display: none }');"
                                 " root.adoptedStyleSheets = [s]", gone="Buy now"),
    "custom_state": Kind(
        "<style>x-job span { display: none } x-job:state(done) span { display: inline }</style>"
        "<x-job id='j'><span>Job finished</span></x-job><script>customElements.define('x-job', class extends"
        " HTMLElement { constructor() { super(); this.internals = this.attachInternals(); } });</script>",
        "j.internals.states.add('done')", new="Job finished"),
    "indeterminate": Kind("<label><input type='checkbox' id='c'> Select all</label>",
                          "c.indeterminate = true", new='"Select all" [checked=mixed]'),
    "closed_shadow_root": Kind("<div id='h'><button>Light button</button></div>",
                               "h.attachShadow({mode: 'closed'}).innerHTML = '<p>Nothing here</p>'",
                               gone="Light button"),
    "slot_assign": Kind(
        "<div id='h'><button>First</button><button>Second</button></div><script>const r = h.attachShadow("
        "{mode: 'open', slotAssignment: 'manual'}); r.innerHTML = '<slot></slot>';</script>",
        "r.querySelector('slot').assign(h.children[1])", new="Second"),
    "iframe_in_shadow_root": Kind(
        _HOST + "<script>root.innerHTML = `<iframe srcdoc=\"<button>Before</button>\"></iframe>`;</script>",
        "root.querySelector('iframe').contentDocument.querySelector('button').textContent = 'After'",
        new='button "After"', gone='button "Before"'),
    "shadow_scroller": Kind(
        _HOST + f"<script>root.innerHTML = `<div id='s' style='height:200px; overflow:auto'>{_ROWS}</div>`;</script>",
        "root.getElementById('s').scrollTop = 20 * 590", new="Row 595", gone="Row 3", viewport_only=True),
    "smil_set": Kind("<svg width='200' height='50'><a id='a' href='/next'><text x='0' y='20'>Next page</text>"
                     "<set attributeName='display' to='none' begin='indefinite'/></a></svg>",
                     "document.querySelector('set').beginElement()", gone="Next page"),
    "web_animation": Kind("<button id='b'>Buy now</button>",
                          "b.animate([{visibility: 'hidden'}], {duration: 1, fill: 'forwards'})", gone="Buy now"),
    "text_node": Kind("<p id='p'>Status: waiting</p>", "p.firstChild.data = 'Status: done'",
                      new="Status: done", gone="Status: waiting"),
}  # fmt: skip
"""Every kind of change the issue listed (45), the Web Animation it named, and a plain text change."""


def shows(text: str, spec: Kind, changed: bool) -> bool:
    """Whether a snapshot's text shows the page before (`changed` False) or after its change."""
    new = spec.new is None or (spec.new in text) == changed
    gone = spec.gone is None or (spec.gone in text) != changed
    return new and gone


_IN_EFFECT = ("await Promise.all(document.getAnimations().map(a => a.finished));"
              " await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));")
"""A change is applied when the animations it started have finished and two frames have been drawn (a Web
Animation or SMIL begins at the next frame: said applied before it, a snapshot would rightly show the page unchanged)."""


def page_html(kind: str) -> str:
    spec = KINDS[kind]
    return (f"<!doctype html><title>{kind}</title><body>{spec.body}{_STEADY}<script>"
            f"fetch('/wait/{kind}').then(async () => {{ {spec.change}; {_IN_EFFECT} return fetch('/applied/{kind}'); }});"
            "</script></body>")  # fmt: skip


class Site:
    """The server's events: one to answer each kind's long-poll, one set when its page made the change."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._release = {kind: threading.Event() for kind in KINDS}
        self._applied = {kind: threading.Event() for kind in KINDS}

    def release(self, kind: str) -> None:
        self._release[kind].set()

    def applied(self, kind: str, timeout: float = 30.0) -> bool:
        """Whether the page made its change (waits for it; blocking: call it in a thread)."""
        return self._applied[kind].wait(timeout)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                _, what, kind = [*self.path.split("?")[0].split("/"), "", "", ""][:3]
                if kind.removesuffix(".html") not in KINDS:
                    self.send_error(404)
                    return
                if what == "wait":
                    site._release[kind].wait(60)
                elif what == "applied":
                    site._applied[kind].set()
                body = page_html(kind.removesuffix(".html")).encode() if what == "page" else b"ok"
                self.send_response(200)
                self.send_header("Content-Type", "text/html" if what == "page" else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


@contextmanager
def self_changing_site() -> Iterator[Site]:
    """The pages on a free port of 127.0.0.1: `{url}/page/<kind>.html`."""
    site = Site("")
    server = ThreadingHTTPServer(("127.0.0.1", 0), site.handler())
    server.daemon_threads = True
    site.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield site
    finally:
        for event in site._release.values():
            event.set()
        server.shutdown()
        server.server_close()
