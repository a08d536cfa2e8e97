"""The echo of an input in the output that follows it, and input steps encoded in order (pure)."""
from __future__ import annotations

import pytest

from lookout.core.errors import BadInput
from lookout.terminal.input.steps import InputStep, encode_steps
from lookout.terminal.waits.echo import FIRST_GAP, EchoTracker


def _track(chars: str, output: bytes, since: int = 10) -> EchoTracker:
    tracker = EchoTracker(since, chars)
    tracker.update(output)
    return tracker


def test_the_echo_ends_after_the_last_echoed_character_through_colours_and_wraps() -> None:
    out = b"sleep 3; e\x1b[32mcho\x1b[0m FINI\r\nSHED\r\n"  # coloured, wrapped by the terminal
    tracker = _track("sleep3;echoFINISHED", out)
    assert tracker.settled and tracker.found == 19 and tracker.end == 10 + out.index(b"SHED") + 4
    assert not tracker.output_after
    tracker.update(out + b"FINISHED\r\n$ ")
    assert tracker.output_after and tracker.end == 10 + out.index(b"SHED") + 4


def test_an_echo_still_arriving_is_not_settled_and_no_echo_settles_at_once() -> None:
    partial = _track("echohi", b"ech")
    assert not partial.settled and partial.found == 3 and partial.end == 13
    silent = _track("secret", b"\r\n" + b"x" * (FIRST_GAP + 1))  # a program that does not echo
    assert silent.settled and silent.found == 0 and silent.end == 10 and silent.output_after


def test_steps_are_encoded_in_their_order_and_the_echo_is_their_visible_text() -> None:
    steps = [InputStep(keys=("i",)), InputStep(paste="a b", text="c"), InputStep(keys=("Escape",))]
    encoded = encode_steps(steps, bracketed=True, app_cursor=False)
    assert encoded.data == b"i\x1b[200~a b\x1b[201~c\x1b"
    assert encoded.echo == "abc"


def test_empty_input_and_unknown_keys_are_bad_input_naming_the_step() -> None:
    with pytest.raises(BadInput, match="input needs"):
        encode_steps([InputStep()], bracketed=False, app_cursor=False)
    with pytest.raises(BadInput) as bad:
        encode_steps([InputStep(text="x"), InputStep(keys=("Nope",))], bracketed=False, app_cursor=False)
    assert bad.value.details == {"field": "input[1].keys"}


def test_a_redraw_of_the_echo_on_the_same_line_is_echo_and_output_on_the_next_line_is_not() -> None:
    pasted = b"echo one\x1b[8D\x1b[7mecho one\x1b[27m"  # readline redraws a paste highlighted
    tracker = _track("echoone", pasted + b"\r\none\r\n")
    assert tracker.end == 10 + len(pasted) - len(b"\x1b[27m") and tracker.output_after
    cat = _track("hello", b"hello\r\nhello\r\n")  # cat repeats its input on the next line: output
    assert cat.end == 15 and cat.output_after
