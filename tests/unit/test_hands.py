"""The ownership rule of many hands on one terminal (lookout.core.hands), as pure functions over records."""
from __future__ import annotations

from lookout.core.hands import (
    NOTICE_MAX,
    InputRecord,
    Ledger,
    Owner,
    notice,
    notice_line,
    standing,
    submitted_lines,
)


def _ledger(*inputs: tuple[str, int, str, int]) -> Ledger:
    """Inputs as (hand, offset, visible characters, lines submitted), in order."""
    ledger = Ledger()
    for hand, offset, echo, lines in inputs:
        ledger.add(InputRecord(seq=ledger.next_seq, hand=hand, offset=offset, at=1.0, text=echo, echo=echo,
                               lines=lines))  # fmt: skip
    return ledger


def test_a_block_belongs_to_the_input_that_carried_its_line_not_to_whoever_typed_last() -> None:
    ledger = _ledger(("A", 10, "sleep2", 1), ("B", 50, "echoB", 1))
    assert ledger.claim(1, 30, "sleep 2") == Owner("A", 0)  # B typed later, while it ran
    assert ledger.claim(2, 90, "echo B") == Owner("B", 1)  # typed ahead, read when A's ended
    assert ledger.started_by(0) == [1] and ledger.started_by(1) == [2]
    assert ledger.claim(1, 30, "sleep 2") == Owner("A", 0)  # the same answer again


def test_a_block_started_before_an_input_was_not_started_by_it() -> None:
    ledger = _ledger(("A", 100, "ls", 1))
    assert ledger.claim(1, 40, "ls") == Owner(None, None)
    assert ledger.claim(2, 140, "ls") == Owner("A", 0)


def test_lines_read_by_a_running_program_are_passed_over_by_the_command_text() -> None:
    # B's line went into A's `read`; A's next command is A's, and B's line is no command's
    ledger = _ledger(("A", 10, "readx", 1), ("B", 40, "hello", 1), ("A", 80, "echonext", 1))
    assert ledger.claim(1, 20, "read x").hand == "A"
    assert ledger.claim(2, 100, "echo next") == Owner("A", 2)
    assert ledger.started_by(1) == []
    assert ledger.claim(3, 200, "ls") == Owner(None, None)  # nothing left unread


def test_keys_without_the_line_fall_back_to_the_earliest_unread_line_of_one_hand() -> None:
    # a person types one key a message: the line is in no single input, its Enter is theirs
    ledger = _ledger(("web-ui", 10, "l", 0), ("web-ui", 11, "s", 0), ("web-ui", 12, "", 1))
    assert ledger.claim(1, 30, "ls") == Owner("web-ui", 2)


def test_several_hands_and_no_line_that_holds_the_command_is_unknown() -> None:
    ledger = _ledger(("A", 10, "", 1), ("B", 12, "", 1))
    owner = ledger.claim(1, 30, "!!")
    assert owner.hand is None and owner.input == 0  # the shell read the earliest line; whose, lookout cannot tell


def test_one_input_of_two_lines_starts_two_blocks() -> None:
    ledger = _ledger(("A", 10, "truefalse", 2), ("B", 12, "echox", 1))
    assert ledger.claim(1, 30, "true").hand == "A"
    assert ledger.claim(2, 40, "false").hand == "A"
    assert ledger.claim(3, 50, "echo x").hand == "B"


def test_standing_of_a_block_to_the_callers_input() -> None:
    ledger = _ledger(("A", 10, "sleep9", 1), ("B", 50, "", 0), ("A", 60, "", 0))
    ledger.claim(1, 20, "sleep 9")
    b_keys, a_keys = ledger.inputs[1], ledger.inputs[2]
    assert standing(1, 20, ledger.owner(1), ledger.inputs[0]) == "mine"
    assert standing(1, 20, ledger.owner(1), b_keys) == "before"  # B's keys went into A's command
    assert standing(1, 20, ledger.owner(1), a_keys) == "mine"  # A's own C-c to its own command
    assert standing(2, 90, Owner("B", 1), a_keys) == "later"
    assert standing(2, 90, Owner(None, 1), a_keys) == "unknown"
    assert standing(2, 90, None, a_keys) == "unknown"


def test_other_hands_and_their_notice() -> None:
    ledger = _ledger(*[("A" if i % 2 else "B", i * 10, f"x{i}", 0) for i in range(12)])
    mine = ledger.last_of("A")
    assert mine is not None and mine.seq == 11
    assert ledger.others("A", mine) == []
    assert [r.seq for r in ledger.others("A", ledger.inputs[7])] == [8, 10]
    assert [r.seq for r in ledger.others("A", None, since=85)] == [10]
    listed = notice(ledger.others("A", None))
    assert len(listed) == NOTICE_MAX and listed[-1] == {"hand": "B", "at": 1.0, "raw_offset": 100, "text": "x10"}
    assert notice_line(listed) == "another hand wrote to this terminal while your call ran: B (last: 'x10')"


def test_records_round_trip_and_bad_lines_are_none() -> None:
    record = InputRecord(seq=3, hand="A", offset=9, at=2.5, text="typed `ls⏎`", echo="ls", lines=1)
    assert InputRecord.from_json(record.to_json()) == record
    for bad in (None, [], {"seq": -1, "hand": "A", "offset": 0, "at": 0}, {"seq": 0, "hand": 5, "offset": 0, "at": 0},
                {"seq": 0, "hand": "A", "offset": 0, "at": "x"}, {"seq": True, "hand": "A", "offset": 0, "at": 0}):  # fmt: skip
        assert InputRecord.from_json(bad) is None


def test_submitted_lines_counts_enters() -> None:
    assert submitted_lines(b"ls\r") == 1 and submitted_lines(b"a\r\nb\n") == 2 and submitted_lines(b"\x03") == 0


def test_an_input_of_two_lines_keeps_its_place_before_later_inputs_once_one_line_is_read() -> None:
    # its first line read, it is still the earliest unread: the next block is its second line, not B's
    ledger = _ledger(("A", 10, "", 2), ("B", 20, "", 1))
    assert ledger.claim(1, 15, "x") == Owner("A", 0)
    assert ledger.claim(2, 30, "y").input == 0
    assert ledger.claim(3, 40, "z").input == 1


def test_an_input_said_written_before_the_last_one_is_taken_at_its_offset() -> None:
    # after a restart the daemon has read less of the journal than the inputs before it were written at
    ledger = _ledger(("A", 500, "ls", 1))
    taken = ledger.add(InputRecord(seq=1, hand="B", offset=300, at=1.0, text="pwd", echo="pwd", lines=1))
    assert taken.offset == 500 and ledger.inputs[-1] == taken
    assert [r.hand for r in ledger.others("C", None, since=400)] == ["A", "B"]
    assert ledger.claim(1, 520, "ls") == Owner("A", 0)
    assert ledger.claim(2, 560, "pwd") == Owner("B", 1)


def test_claiming_again_a_long_history_in_order_gives_each_block_its_own_input() -> None:
    # (what a restarted daemon does with every block a terminal had: a claim reads up to the input with its text,
    # not every unread one; here all 3,000 were typed ahead, before the first block started)
    ledger = _ledger(*[("A" if i % 3 else "B", i, f"cmd{i}", 1) for i in range(3000)])
    owners = [ledger.claim(i, 10_000 + i * 100, f"cmd {i}") for i in range(3000)]
    assert owners == [Owner("A" if i % 3 else "B", i) for i in range(3000)]
