"""Writes docs/benchmarks.md from the benchmarks' JSON lines, so no figure is ever typed by hand.

Each bench/*.py prints one JSON object (with `"bench": "<its name>"`) as the last line of its output;
`make bench` collects those lines into a file and runs

    .venv/bin/python bench/report.py bench-results.jsonl > docs/benchmarks.md

Each benchmark becomes a section: the first paragraph of its script's docstring (what it measures and
against which peer), then its figures as Markdown tables in the order the benchmark emitted them, so a
peer's figure stands beside lookout's: scalars in one table, a mapping of rows (one per case, method or
screen) or a list of rows as a table with one column per field. `--stub` writes the page that says how to
produce the figures, for a checkout where nobody has run them. `--into PAGE` keeps the sections of an earlier
page for the benchmarks not run this time (`make bench BENCHES=restart_load` runs one), replaces those that
were, and drops those whose script is gone; each new section says the day it was measured.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections.abc import Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
HEADER = [
    "# Benchmarks",
    "",
    "Written by `make bench` (bench/report.py, from the last JSON line each bench/*.py prints); do not edit",
    "by hand. Each benchmark measures lookout and its peer side by side in the same run, so compare figures",
    "within a section: the machine's speed moves between runs.",
]
STUB = [
    *HEADER,
    "",
    "No figures yet: nobody has run the benchmarks on this checkout. To write them here:",
    "",
    "```sh",
    "make bench   # installs what the benchmarks need (vim, gcc, git), runs each, then writes this page",
    "```",
    "",
    "The benchmarks are the scripts in [bench/](../bench); each one's docstring says what it measures and",
    "against which peer.",
]


def parse_lines(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The benchmarks' figures, one object per non-blank line; each must be a JSON object naming its `bench`."""
    results = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"line {n} is not JSON ({e.msg}): {line[:80]!r}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("bench"), str):
            raise ValueError(f'line {n} is not a JSON object with a "bench" name: {line[:80]!r}')
        results.append(obj)
    return results


def cell(value: Any) -> str:
    """One figure as table text: thousands separated, floats to 4 significant digits, booleans as yes/no."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items())
    if isinstance(value, str):
        return value.replace("|", "\\|").replace("\n", " ")
    return json.dumps(value, separators=(",", ":")).replace("|", "\\|")


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _columns(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every field of the rows, in the order of first appearance."""
    return list(dict.fromkeys(k for row in rows for k in row))


def _is_rows(value: Any) -> bool:
    """A mapping of named rows ({"png": {...}, "jpeg": {...}}) or a list of rows ([{...}, {...}])."""
    if isinstance(value, dict):
        return bool(value) and all(isinstance(v, dict) for v in value.values())
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def rows_table(name: str, value: dict[str, Any] | list[dict[str, Any]]) -> list[str]:
    if isinstance(value, dict):
        fields = _columns(value.values())
        return table([name, *fields], [[cell(k), *(cell(row.get(f)) for f in fields)] for k, row in value.items()])
    fields = _columns(value)
    return table(fields, [[cell(row.get(f)) for f in fields] for row in value])


def section(figures: Mapping[str, Any], description: str = "", measured: str = "") -> list[str]:
    """One benchmark's section: its description, the day it was measured, its scalar figures, then one table
    per set of rows."""
    out = ["", f"## {figures['bench']}", ""]
    if description:
        out += [description, ""]
    if measured:
        out += [f"Measured {measured}.", ""]
    scalars = [[f"`{k}`", cell(v)] for k, v in figures.items() if k != "bench" and not _is_rows(v)]
    if scalars:
        out += [*table(["figure", "value"], scalars), ""]
    for key, value in figures.items():
        if key != "bench" and _is_rows(value):
            out += [f"`{key}`:", "", *rows_table(key, value), ""]
    return out[:-1] if out[-1] == "" else out


def render(
    results: list[dict[str, Any]], descriptions: Mapping[str, str], earlier: str = "", measured: str = ""
) -> str:
    """docs/benchmarks.md for these results; `descriptions` maps a benchmark's name to a paragraph about it;
    `earlier`: a page whose sections stay for the benchmarks not in `results` (in its order, new ones after),
    except those whose script is gone."""
    fresh = {
        figures["bench"]: section(figures, descriptions.get(figures["bench"], ""), measured) for figures in results
    }
    kept = {}
    for chunk in earlier.split("\n## ")[1:]:
        name = chunk.split("\n", 1)[0].strip()
        if (BENCH_DIR / f"{name}.py").is_file():
            kept[name] = ["", f"## {chunk.rstrip()}"]
    lines = list(HEADER)
    for name in [*kept, *(name for name in fresh if name not in kept)]:
        lines += fresh.get(name) or kept[name]
    return "\n".join(lines) + "\n"


def description(name: str) -> str:
    """The first paragraph of bench/<name>.py's docstring, on one line (empty when there is none)."""
    path = BENCH_DIR / f"{name}.py"
    if not path.is_file():
        return ""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("results", nargs="?", type=Path, help="the collected JSON lines (default: stdin)")
    parser.add_argument("--stub", action="store_true", help="the page without figures, saying how to make them")
    parser.add_argument("--into", type=Path, help="an earlier page: its sections of benchmarks not run stay")
    args = parser.parse_args(argv)
    if args.stub:
        sys.stdout.write("\n".join(STUB) + "\n")
        return 0
    text = args.results.read_text() if args.results else sys.stdin.read()
    try:
        results = parse_lines(text.splitlines())
    except ValueError as e:
        print(f"bench/report.py: {e}", file=sys.stderr)
        return 1
    if not results:
        print("bench/report.py: no benchmark results to write", file=sys.stderr)
        return 1
    earlier = args.into.read_text() if args.into is not None and args.into.is_file() else ""
    descriptions = {r["bench"]: description(r["bench"]) for r in results}
    measured = f"{date.today().isoformat()} (the machine's load average {os.getloadavg()[0]:.1f} as it ended)"
    sys.stdout.write(render(results, descriptions, earlier, measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())
