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


def ref_of(text: str, line_start: str) -> str:
    """The `[ref=...]` of the first snapshot line that starts (after its indent) with `line_start`."""
    line = next(line for line in text.splitlines() if line.strip().startswith(line_start))
    return line.split("[ref=")[1].split("]")[0]
