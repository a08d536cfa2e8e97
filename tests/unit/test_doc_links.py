"""Every relative link in README.md and docs/*.md points at a file that exists, and its #anchor (if any) at a
heading of that file, with anchors made as GitHub makes them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a link or heading inside one is an example, not a link)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation other than `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a file's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    for line in prose_lines(text):
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            base = slug(m.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(f"{base}-{n}" if n else base)
    return found


def relative_links(text: str) -> list[str]:
    return [t for line in prose_lines(text) for t in LINK.findall(line) if not re.match(r"[a-z]+:", t)]


def test_slug_is_githubs() -> None:
    assert slug("The MCP shim: `lookout-mcp`") == "the-mcp-shim-lookout-mcp"
    assert slug("Watching a terminal: deltas, live streams, events, recordings") == (
        "watching-a-terminal-deltas-live-streams-events-recordings"
    )
    assert anchors("## A\n```\n## B\n```\n## A\n") == {"a", "a-1"}


def test_links_in_code_blocks_and_urls_are_not_checked() -> None:
    text = "[x](https://example.org) [y](docs/a.md#b)\n```\n[z](nowhere.md)\n```\n![i](img.png)"
    assert relative_links(text) == ["docs/a.md#b"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in relative_links(doc.read_text()):
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT)}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, broken


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    head = "\n".join(text.splitlines()[:6])
    assert "make run" in head and "make test" in head
