"""bench/report.py: the benchmarks' JSON lines become docs/benchmarks.md, figures never typed by hand."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
assert _spec and _spec.loader
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

INGEST = {"bench": "terminal_ingest", "size_mb": 50.0, "tmux_mb_s": 17.4, "lookout_mb_s": 33.4,
          "lookout_vs_tmux": 1.92, "screen_samples": 12345, "goal_lookout_ge_tmux": True}  # fmt: skip
CAPTURE = {"bench": "device_capture", "screen": [1440, 3120],
           "screenshots": {"lookout png": {"median_ms": 269.0, "bytes": 332741, "image": [462, 1000]},
                           "adbutils (peer)": {"median_ms": 327.0, "bytes": 49559, "image": [1440, 3120]}}}  # fmt: skip
LISTING = {"bench": "device_listing", "dumps": [{"dump": "WhatsApp", "mobile_mcp_tokens": 6799, "lookout_tokens": 979},
                                                {"dump": "TikTok", "mobile_mcp_tokens": 6733, "lookout_tokens": 779,
                                                 "note": "a|b"}]}  # fmt: skip


def test_parse_lines_takes_one_object_a_line_and_skips_blank_ones() -> None:
    lines = [json.dumps(INGEST), "", json.dumps(CAPTURE)]
    assert report.parse_lines(lines) == [INGEST, CAPTURE]


@pytest.mark.parametrize("line", ["not json", "[1, 2]", '{"figures": 1}', '{"bench": 3}'])
def test_parse_lines_refuses_what_is_not_a_named_benchmark(line: str) -> None:
    with pytest.raises(ValueError, match="line 2"):
        report.parse_lines([json.dumps(INGEST), line])


def test_cells() -> None:
    assert report.cell(True) == "yes" and report.cell(False) == "no"
    assert report.cell(None) == "-"
    assert report.cell(1958264) == "1,958,264"
    assert report.cell(20603991.4) == "20,603,991"
    assert report.cell(33.41) == "33.41"
    assert report.cell(0.000381) == "0.000381"
    assert report.cell([462, 1000]) == "462, 1,000"
    assert report.cell({"auto": 0.5, "runs": 0.61}) == "auto 0.5, runs 0.61"
    assert report.cell("a|b") == "a\\|b"


def test_scalars_keep_the_benchmarks_order_so_the_peer_stands_beside_lookout() -> None:
    text = report.render([INGEST], {"terminal_ingest": "Terminal ingest: lookout against tmux."})
    lines = text.splitlines()
    start = lines.index("## terminal_ingest")
    assert lines[start + 2] == "Terminal ingest: lookout against tmux."
    body = lines[start + 4 :]
    assert body[:2] == ["| figure | value |", "|---|---|"]
    assert body[2:8] == ["| `size_mb` | 50 |", "| `tmux_mb_s` | 17.4 |", "| `lookout_mb_s` | 33.4 |",
                         "| `lookout_vs_tmux` | 1.92 |", "| `screen_samples` | 12,345 |",
                         "| `goal_lookout_ge_tmux` | yes |"]  # fmt: skip


def test_named_rows_become_a_table_with_the_name_first() -> None:
    lines = report.render([CAPTURE], {}).splitlines()
    assert "| `screen` | 1,440, 3,120 |" in lines
    i = lines.index("`screenshots`:")
    assert lines[i + 2 : i + 6] == [
        "| screenshots | median_ms | bytes | image |",
        "|---|---|---|---|",
        "| lookout png | 269 | 332,741 | 462, 1,000 |",
        "| adbutils (peer) | 327 | 49,559 | 1,440, 3,120 |",
    ]


def test_a_list_of_rows_takes_every_field_in_order_of_first_appearance() -> None:
    lines = report.render([LISTING], {}).splitlines()
    i = lines.index("| dump | mobile_mcp_tokens | lookout_tokens | note |")
    assert lines[i + 2 : i + 4] == ["| WhatsApp | 6,799 | 979 | - |", "| TikTok | 6,733 | 779 | a\\|b |"]
    assert "| figure | value |" not in lines  # no scalars, no empty table


def test_every_benchmark_has_its_section_in_the_order_run() -> None:
    text = report.render([INGEST, CAPTURE, LISTING], {})
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads == ["## terminal_ingest", "## device_capture", "## device_listing"]
    assert text.startswith("# Benchmarks\n") and text.endswith("|\n")


def test_a_run_of_some_benchmarks_keeps_the_other_sections_and_drops_those_of_scripts_gone() -> None:
    earlier = report.render([INGEST, CAPTURE, {"bench": "no_such_bench", "x": 1}], {}, measured="2026-01-02")
    newer = {**CAPTURE, "screen": [1080, 2400]}
    text = report.render([newer, LISTING], {}, earlier, measured="2026-03-04")
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads == ["## terminal_ingest", "## device_capture", "## device_listing"]
    ingest, capture, listing = text.split("\n## ")[1:]
    assert "Measured 2026-01-02." in ingest and "| `tmux_mb_s` | 17.4 |" in ingest
    assert "Measured 2026-03-04." in capture and "| `screen` | 1,080, 2,400 |" in capture
    assert "| `screen` | 1,440" not in capture
    assert "Measured 2026-03-04." in listing and text.endswith("|\n")


def test_descriptions_come_from_the_scripts_docstrings() -> None:
    assert report.description("terminal_ingest").startswith("Terminal ingest benchmark:")
    assert report.description("no_such_bench") == ""


def test_main_writes_the_page_or_says_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps(INGEST) + "\n")
    assert report.main([str(results)]) == 0
    assert "## terminal_ingest" in capsys.readouterr().out
    page = tmp_path / "benchmarks.md"
    page.write_text(report.render([CAPTURE], {}))
    assert report.main([str(results), "--into", str(page)]) == 0
    out = capsys.readouterr().out
    assert "## device_capture" in out and "## terminal_ingest" in out
    results.write_text("garbage\n")
    assert report.main([str(results)]) == 1
    assert "line 1 is not JSON" in capsys.readouterr().err
    results.write_text("")
    assert report.main([str(results)]) == 1


def test_the_committed_page_is_generated() -> None:
    """docs/benchmarks.md is either the stub or a page this formatter wrote (never figures typed by hand)."""
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert page.startswith("\n".join(report.HEADER))
    assert page == "\n".join(report.STUB) + "\n" or "\n## " in page
