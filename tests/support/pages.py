"""Test pages shared by the browser tests over HTTP and over MCP, and the one way to read a ref out of a page
snapshot's text."""
from __future__ import annotations


def big_page(rows: int) -> str:
    """A catalogue with `rows` table rows (each with a button and a link) and 60 navigation links: more than
    any default budget holds."""
    cells = "".join(f"<tr><td>Item {i}</td><td>${i * 1.37:.2f}</td><td><button>Add {i}</button></td>"
                    f"<td><a href='/i/{i}'>Details {i}</a></td></tr>" for i in range(rows))  # fmt: skip
    links = " ".join(f"<a href='/n{i}'>Section {i}</a>" for i in range(60))
    return (f"<!doctype html><html><head><title>Catalogue</title></head><body><nav aria-label='Sections'>{links}"
            f"</nav><main><h1>Catalogue</h1><table>{cells}</table></main></body></html>")  # fmt: skip


FORMS = """<!doctype html><title>Forms</title>
<label>Name? <button onclick="document.getElementById('out').textContent = prompt('Your name?') || 'none'">Ask</button></label>
<button onclick="document.getElementById('out').textContent = confirm('Sure?') ? 'yes' : 'no'">Confirm</button>
<label>File <input type="file" id="file" onchange="document.getElementById('out').textContent = this.files[0].name"></label>
<p id="out">-</p>
<label>Quantity <input type="number" id="qty"></label>
<label>Size <select id="size"><option>Small</option><option>Large</option></select></label>"""
"""Dialogs (prompt, confirm) and a file input."""

CLOSED_CARD = """<!doctype html><title>Card</title><body>
<h1>Account</h1><button>Outside</button>
<x-card aria-label="Card" role="group"><span>light child</span></x-card>
<p id="out">-</p><x-bare></x-bare>
<script>
customElements.define('x-bare', class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: 'closed'}).innerHTML = '<a href="#more">More</a>'; } });
customElements.define('x-card', class extends HTMLElement { constructor() { super();
  const root = this.attachShadow({mode: 'closed'});
  root.innerHTML = '<label>Email <input id="email"></label><button id="save">Save</button><slot></slot>'
    + '<label><input type="checkbox" id="agree"> Agree</label>'
    + '<select aria-label="Size" id="size"><option>Small</option><option>Large</option></select>'
    + '<button id="gone">Remove me</button><button id="busy">Busy</button>';
  const out = document.getElementById('out');
  root.getElementById('save').onclick = () => { out.textContent = 'Saved ' + root.getElementById('email').value; };
  root.getElementById('agree').onchange = e => { out.textContent = 'Agree ' + e.target.checked; };
  root.getElementById('size').onchange = e => { out.textContent = 'Size ' + e.target.value; };
  root.getElementById('gone').onclick = e => e.target.remove();
  root.getElementById('email').onkeydown = e => { if (e.key === 'Enter') out.textContent = 'Enter pressed'; };
  root.getElementById('save').onmouseenter = () => { out.textContent = 'Hovering'; };
  root.getElementById('busy').onclick = () => {
    root.getElementById('save').insertAdjacentHTML('afterend', '<div role="dialog" aria-label="Busy" '
      + 'style="position: fixed; inset: 0; background: #8888">Please wait</div>'); };
}});
</script></body>"""
"""A custom element whose closed shadow root holds an email field, a button that shows it in `#out`, a checkbox,
a select, a button that removes itself, one that covers the page with a dialog of the root's own and (through a
slot) the host's light child; and a bare host (no role)
whose closed root holds a link."""


def ref_of(text: str, line_start: str) -> str:
    """The `[ref=...]` of the first snapshot line that starts (after its indent) with `line_start`."""
    line = next(line for line in text.splitlines() if line.strip().startswith(line_start))
    return line.split("[ref=")[1].split("]")[0]
