"""Command blocks from shell marks (the tracker and its file), and block output rendering."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from lookout.core.tokens import count_tokens
from lookout.terminal.blocks import output as block_output
from lookout.terminal.blocks.blocks import BLOCKS_FILE, Block, BlockTracker
from lookout.terminal.blocks.output import fit_tokens, fold_repeats, render_output, replay_lines
from lookout.terminal.journal.persistence import GuardedWrites
from lookout.terminal.process.shell_integration import supported
from lookout.terminal.screen.scanner import ShellMark, SideScanner
from lookout.terminal.waits.waiting import BlockSummary, compile_until, wait_until
from tests.support.terminals import FakeTerminal

NONCE = "5eed"


def mark(payload: str, nonce: str | None = NONCE) -> bytes:
    """A mark as the shell hooks write it (or, with another nonce or none, as a program might)."""
    suffix = f";nonce={nonce}" if nonce is not None else ""
    return f"\x1b]{payload}{suffix}\x07".encode()


def command(line: str, output: bytes, code: int | None) -> bytes:
    """One command line's marks around its output, as at an integrated prompt."""
    end = mark("133;D" if code is None else f"133;D;{code}")
    return mark(f"633;E;{line}") + mark("133;C") + output + end + mark("133;A") + b"$ "


class Feeder:
    """Feeds a tracker from a byte stream through the real side scanner, with journal offsets; a mark with the
    session's nonce is genuine (as the holder would have recorded it)."""

    def __init__(self, tracker: BlockTracker) -> None:
        self.tracker = tracker
        self.scanner = SideScanner()
        self.stream = b""
        self.clock = 100.0

    def __call__(self, data: bytes, cwd: str = "/home/u") -> None:
        base = len(self.stream)
        self.stream += data
        for event in self.scanner.feed(data):
            if isinstance(event, ShellMark):
                genuine = bool(event.params) and event.params[-1] == f"nonce={NONCE}"
                self.tracker.feed(event, base + event.end, self.clock if genuine else None, cwd)
        self.clock += 1.5


@pytest.fixture
def feed(tmp_path: Path) -> Feeder:
    return Feeder(BlockTracker(tmp_path, True, GuardedWrites("t")))


def test_a_command_line_becomes_a_block_with_its_output_range(feed: Feeder, tmp_path: Path) -> None:
    feed(mark("133;A") + b"$ " + mark("133;B"))
    feed(mark("633;E;ls -l \\x3b echo \\\\x") + mark("133;C"), cwd="/src")
    assert feed.tracker.current is not None and feed.tracker.current.command == "ls -l ; echo \\x"
    feed(b"total 0\r\n" + mark("133;D;2") + mark("133;A") + b"$ ")
    (block,) = feed.tracker.finished()
    assert feed.tracker.current is None
    start, end = block.start, block.end
    assert feed.stream[start:end] == b"total 0\r\n"
    assert block.to_json() == {
        "n": 1, "command": "ls -l ; echo \\x", "cwd": "/src", "started_at": 101.5, "ended_at": 103.0,
        "duration_ms": 1500, "exit_code": 2, "raw": {"start": start, "end": end},
    }
    assert (tmp_path / BLOCKS_FILE).read_bytes().count(b"\n") == 1


def test_forged_and_foreign_marks_are_ignored_and_counted(feed: Feeder) -> None:
    feed(mark("633;E;make") + mark("133;C"))
    feed(b"building\r\n" + mark("133;D;0", nonce=None) + mark("133;D;0", nonce="bad") + b"\x1b]133;D;0\x1b\\")
    assert feed.tracker.current is not None, "a forged D must not end the running block"
    feed(b"done\r\n" + mark("133;D;0") + mark("133;A", nonce=None))
    (block,) = feed.tracker.finished()
    assert feed.stream[block.start : block.end].endswith(b"\x1b\\done\r\n")
    assert feed.tracker.describe() == {"block": None, "block_count": 1, "forged_marks": 4}


def test_without_a_nonce_marks_make_no_blocks_and_are_not_counted(tmp_path: Path) -> None:
    feed = Feeder(BlockTracker(tmp_path, False, GuardedWrites("t")))
    feed(command("ls", b"x\r\n", 0))
    assert feed.tracker.describe() == {"block": None, "block_count": 0, "forged_marks": 0}


def test_empty_cycles_are_dropped_and_keep_no_number(feed: Feeder) -> None:
    feed(command("", b"", None))  # Ctrl-C at a prompt, as some integrations report it
    assert feed.tracker.finished() == []
    feed(command("", b"", 130))  # an exit status is something that happened: kept
    feed(command("", b"^C\r\n", None))  # so is output
    feed(command("true", b"", None))  # and a command
    assert [(b.n, b.command, b.exit_code) for b in feed.tracker.finished()] == [
        (1, "", 130), (2, "", None), (3, "true", None),
    ]


def test_blocks_survive_reload_with_a_torn_last_line(feed: Feeder, tmp_path: Path) -> None:
    for i in range(3):
        feed(command(f"echo {i}", f"{i}\r\n".encode(), i))
    with (tmp_path / BLOCKS_FILE).open("ab") as f:
        f.write(b'{"n": 4, "comm')
    again = BlockTracker(tmp_path, False, GuardedWrites("t"))
    assert again.finished() == feed.tracker.finished()
    with (tmp_path / BLOCKS_FILE).open("ab") as f:
        f.write(b'\n{"n": 4, "command": "no raw"}\n[1, 2]\n"text"\n')  # JSON, but not blocks
    assert BlockTracker(tmp_path, False, GuardedWrites("t")).finished() == feed.tracker.finished()
    assert [b.exit_code for b in again.finished()] == [0, 1, 2]


def test_lookups_by_number_and_by_offset(feed: Feeder) -> None:
    for i in range(5):
        feed(command(f"step {i}", b"ok\r\n", 0))
    feed(mark("633;E;sleep 9") + mark("133;C"))
    blocks = feed.tracker.finished()
    assert [b.n for b in feed.tracker.finished(since=3)] == [4, 5]
    assert [b.n for b in feed.tracker.finished(last=2)] == [4, 5]
    assert [b.n for b in feed.tracker.finished(since=1, last=10)] == [2, 3, 4, 5]
    assert feed.tracker.get(2) is blocks[1]
    running = feed.tracker.get(6)
    assert running is not None and running.command == "sleep 9" and running.end is None
    assert feed.tracker.get(7) is None and feed.tracker.get(0) is None
    assert feed.tracker.ended_after(0) is blocks[0]
    assert feed.tracker.ended_after(blocks[2].end) is blocks[3]
    assert feed.tracker.ended_after(blocks[2].end - 1) is blocks[2]
    assert feed.tracker.ended_after(blocks[4].end) is None


def test_a_block_whose_end_mark_never_came_ends_where_the_next_begins(feed: Feeder) -> None:
    feed(mark("633;E;first") + mark("133;C") + b"1\r\n")
    feed(mark("133;C"))  # a repeated C (no E before it) starts nothing
    assert feed.tracker.current is not None and feed.tracker.current.command == "first"
    feed(mark("633;E;second"))
    next_start = len(feed.stream)
    feed(mark("133;C") + b"2\r\n" + mark("133;D;0"))
    first, second = feed.tracker.finished()
    assert (first.command, first.exit_code, first.end) == ("first", None, next_start)
    assert (second.command, second.exit_code) == ("second", 0)


def test_a_block_still_running_at_exit_ends_with_the_shell(feed: Feeder) -> None:
    feed(mark("633;E;exit 4") + mark("133;C"))
    block = feed.tracker.close(len(feed.stream), 200.0, 4)
    assert block is not None and block.exit_code == 4 and block.command == "exit 4"
    assert feed.tracker.close(len(feed.stream), 201.0, 4) is None


async def test_a_wait_until_block_end_names_the_first_block_ending_after_since(feed: Feeder) -> None:
    term = FakeTerminal()
    term.blocks = feed.tracker  # type: ignore[attr-defined]
    feed(command("make", b"built\r\n", 0))
    since = len(feed.stream)
    missed = await wait_until(term, compile_until(block_end=True), since, 0.05)
    assert missed.matched is False and missed.reason == "timeout"
    feed(mark("633;E;make test") + mark("133;C") + b"FAIL\r\n")
    assert (await wait_until(term, compile_until(block_end=True), since, 0.05)).matched is False
    feed(mark("133;D;1") + mark("133;A") + b"$ " + mark("133;B"))
    hit = await wait_until(term, compile_until(block_end=True), since, 1)
    assert hit.matched and hit.reason == "block_end" and hit.prompt is True and hit.exit_code == 1
    assert hit.block == BlockSummary(n=2, exit_code=1, command="make test")
    assert hit.cursor == feed.tracker.get(2).end  # type: ignore[union-attr]
    first = await wait_until(term, compile_until(block_end=True), 0, 1)
    assert first.block.n == 1


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/bin/bash"], True), (["zsh", "-i"], True), (["bash", "--norc"], False), (["zsh", "-c", "ls"], False),
        (["fish"], False), (["/usr/bin/python3"], False),
    ],
)
def test_only_bare_interactive_bash_and_zsh_get_integration(argv: list[str], expected: bool) -> None:
    assert supported(argv) is expected


# ----------------------------------------------------------------------------------- rendering

ENGINES = ["avt", "pyte"]


def render(data: bytes, engine: str = "avt", max_tokens: int = 2000, cols: int = 80) -> dict:
    return render_output(lambda o, n: data[o : o + n], 0, len(data), engine, cols, 24, max_tokens)


@pytest.mark.parametrize("engine", ENGINES)
def test_progress_redraws_collapse_to_their_final_state(engine: str) -> None:
    bar = b"".join(b"\rdownloading [" + b"#" * i + b" " * (20 - i) + b"] %3d%%" % (i * 5) for i in range(21))
    multi = b"a: 0%\r\nb: 0%\r\n" + b"\x1b[2Aa: 50%\r\nb: 70%\r\n" + b"\x1b[2A\x1b[Ka: done\r\n\x1b[Kb: done\r\n"
    out = render(b"start\r\n" + bar + b"\r\n" + multi + b"\x1b[31mred\x1b[0m end\r\n", engine)
    assert out["text"] == "start\ndownloading [####################] 100%\na: done\nb: done\nred end"
    assert out["lines"] == 5 and out["omitted_lines"] == 0 and out["truncated"] is False


@pytest.mark.parametrize("engine", ENGINES)
def test_full_screen_programs_leave_only_what_stays_on_screen(engine: str) -> None:
    data = b"before\r\n\x1b[?1049h\x1b[H" + b"editor line\r\n" * 30 + b"\x1b[?1049lafter\r\n"
    assert render(data, engine)["text"] == "before\nafter"


def test_repeated_lines_are_folded() -> None:
    data = b"x\r\n" + b"retrying\r\n" * 57 + b"y\r\ny\r\nz\r\n"
    assert render(data)["text"] == "x\nretrying  [repeated 57 times]\ny\ny\nz"
    assert list(fold_repeats(["a", "a", "", "", "b"])) == [("a", 2), ("", 2), ("b", 1)]


@pytest.mark.parametrize("engine", ENGINES)
def test_long_outputs_replay_in_order_with_bounded_scrollback(engine: str) -> None:
    lines = [f"line {i} " + "x" * (i % 150) for i in range(5000)]  # some wrap at 80 columns
    data = "\r\n".join(lines).encode() + b"\r\n"
    wrapped = []
    for line in lines:
        wrapped += [line[k : k + 80].rstrip() for k in range(0, len(line), 80)]
    assert list(replay_lines(data, engine, 80, 24)) == wrapped


def test_a_budget_keeps_head_and_tail_and_says_what_was_cut() -> None:
    data = b"".join(b"line %d of the build log\r\n" % i for i in range(2000))
    out = render(data, max_tokens=300)
    assert out["tokens"] <= 300 and out["truncated"] is True and out["lines"] == 2000
    text = out["text"].split("\n")
    cut = next(i for i, line in enumerate(text) if line.startswith("[... "))
    assert text[0] == "line 0 of the build log" and text[-1] == "line 1999 of the build log"
    assert text[cut] == f"[... {out['omitted_lines']} lines omitted ...]"
    assert len(text) - 1 + out["omitted_lines"] == 2000
    assert len(text) - cut - 1 > cut, "the tail gets the larger share"
    assert text[cut - 1] == f"line {cut - 1} of the build log"
    assert text[cut + 1] == f"line {cut + out['omitted_lines']} of the build log"


def test_fit_tokens_never_exceeds_the_budget() -> None:
    head = [(f"{'wörd ' * (i % 7)}{i}", 1 + i % 4) for i in range(300)]
    for budget in (40, 77, 200, 1000):
        text, omitted = fit_tokens(head[:150], head[150:], 0, 0, budget)
        assert count_tokens(text) <= budget and omitted > 0
    assert fit_tokens(head[:3], [], 0, 0, 1000) == ("0\nwörd 1\nwörd 1\nwörd wörd 2  [repeated 3 times]", 0)


def test_huge_outputs_render_their_ends_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(block_output, "HEAD_WINDOW", 1000)
    monkeypatch.setattr(block_output, "TAIL_WINDOW", 2000)
    data = b"".join(b"row %05d\r\n" % i for i in range(2000))  # 22000 bytes
    out = render(data, max_tokens=100_000)
    text = out["text"].split("\n")
    assert text[0] == "row 00000" and text[-1] == "row 01999" and out["truncated"] is True
    marker = next(line for line in text if line.startswith("[... "))
    assert re.fullmatch(r"\[\.\.\. \d+ bytes omitted \.\.\.\]", marker)
    assert len(text) < 400


def test_a_block_handed_out_stays_as_it_was_when_the_command_ends(feed: Feeder, tmp_path: Path) -> None:
    feed(mark("633;E;make") + mark("133;C") + b"building\r\n")
    running = feed.tracker.current
    assert running is not None and running.end is None
    feed(mark("133;D;0") + mark("133;A"))
    (ended,) = feed.tracker.finished()
    assert running.end is None and running.exit_code is None, "the caller's copy is not changed under it"
    assert (ended.n, ended.exit_code, ended.end) == (1, 0, running.start + len(b"building\r\n"))
    with pytest.raises(AttributeError):
        ended.exit_code = 1  # type: ignore[misc]
    assert Block.from_json(ended.to_json()) == ended == BlockTracker(tmp_path, False, GuardedWrites("t")).get(1)
    assert feed.tracker.describe()["block"] is None
