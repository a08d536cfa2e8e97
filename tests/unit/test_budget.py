"""The token-budget mechanics: a text that states its own count, and the fitter every budgeted view uses."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lookout.core.budget import LINEAR_STEPS, SELF_COUNT_ROUNDS, fit, self_counted, within
from lookout.core.tokens import count_tokens

# ----------------------------------------------------------------------------- self_counted


@pytest.mark.parametrize(("pad", "expected"), [(96, 98), (97, 99), (98, 101), (99, 102), (996, 999), (997, 1001)])
def test_self_count_across_a_digit_boundary(pad: int, expected: int) -> None:
    """Counting characters, "x" * pad + str(n) states its own length only at `expected`: at 98 x's, 100 would
    make the text 101 long, so the count goes on to 101 (three rounds from 0)."""
    text, n = self_counted(lambda n: "x" * pad + str(n), len)
    assert (text, n) == ("x" * pad + str(expected), expected)


def test_self_count_with_the_real_tokenizer_across_999_to_1000() -> None:
    """o200k puts up to three digits in a token: a text of about 1000 tokens needs one more for its count."""
    counts = set()
    for words in range(990, 1002):

        def render(n: int, words: int = words) -> str:
            return " x" * words + f"\n# Tokens: {n}"

        text, n = self_counted(render)
        assert count_tokens(text) == n
        counts.add(n)
    assert min(counts) < 1000 < max(counts)


def test_self_count_gives_up_on_a_count_that_never_settles() -> None:
    calls = []

    def restless(text: str) -> int:
        calls.append(text)
        return len(calls) * 1000

    text, n = self_counted(lambda n: f"tokens={n}", restless)
    assert len(calls) == SELF_COUNT_ROUNDS
    assert text == f"tokens={n}" and n == SELF_COUNT_ROUNDS * 1000


# ----------------------------------------------------------------------------- within


def test_within_takes_from_the_first_and_stops_at_the_first_that_does_not_fit() -> None:
    assert within([3, 3, 3], 7) == 2
    assert within([1, 10, 1], 5) == 1  # the third would fit, but the items are taken in order
    assert within([3, 3], 6) == 2
    assert within([1], -1) == 0
    assert within([], 10) == 0


def test_within_reads_no_cost_past_the_first_that_does_not_fit() -> None:
    read: list[int] = []

    def costs() -> Iterator[int]:
        for i in range(1000):
            read.append(i)
            yield 5

    assert within(costs(), 12) == 2
    assert read == [0, 1, 2]


# ----------------------------------------------------------------------------- fit


def counted(costs: list[int], overhead: int) -> tuple[Callable[[int], tuple[int, int]], list[int]]:
    """A measure whose count grows with k (the overhead plus the first k costs), and the choices it measured."""
    calls: list[int] = []

    def measure(k: int) -> tuple[int, int]:
        calls.append(k)
        return k, overhead + sum(costs[:k])

    return measure, calls


def largest_fitting(costs: list[int], overhead: int, budget: int) -> int:
    return max((k for k in range(len(costs) + 1) if overhead + sum(costs[:k]) <= budget), default=0)


@given(st.lists(st.integers(0, 50), max_size=200), st.integers(0, 40), st.integers(-10, 3000))
def test_fit_finds_the_largest_choice_that_fits(costs: list[int], overhead: int, budget: int) -> None:
    measure, calls = counted(costs, overhead)
    fitted = fit(measure, budget, len(costs))
    assert fitted.choice == largest_fitting(costs, overhead, budget)
    assert fitted.value == fitted.choice and fitted.tokens == overhead + sum(costs[: fitted.choice])
    assert fitted.tokens <= budget or fitted.choice == 0  # never over the budget but with nothing left to cut
    assert len(calls) <= LINEAR_STEPS + 2 * math.log2(len(costs) + 1) + 3


@given(st.lists(st.integers(1, 50), min_size=1, max_size=200), st.integers(0, 40), st.integers(0, 3000), st.data())
def test_fit_backs_off_from_the_estimate_and_trusts_it_when_it_holds(
    costs: list[int], overhead: int, budget: int, data: st.DataObject
) -> None:
    estimate = data.draw(st.integers(-5, len(costs) + 5))
    measure, _ = counted(costs, overhead)
    best = largest_fitting(costs, overhead, budget)
    fitted = fit(measure, budget, len(costs), lambda: estimate)
    if best == len(costs):
        assert fitted.choice == len(costs)
    else:
        assert fitted.choice == min(best, max(estimate, 0))


def test_fit_asks_for_no_estimate_when_the_whole_fits() -> None:
    def estimate() -> int:
        raise AssertionError("estimated although the whole fits")

    measure, calls = counted([5] * 10, 3)
    assert fit(measure, 100, 10, estimate).choice == 10
    assert calls == [10]


def test_fit_costs_one_measure_per_step_when_the_estimate_is_a_little_off() -> None:
    measure, calls = counted([10] * 100, 0)
    assert fit(measure, 500, 100, lambda: 53).choice == 50
    assert calls == [100, 53, 52, 51, 50]


def test_fit_bisects_what_its_doubling_steps_skipped() -> None:
    measure, calls = counted([1] * 10_000, 0)
    assert fit(measure, 1234, 10_000).choice == 1234
    assert len(calls) <= LINEAR_STEPS + 2 * math.log2(10_000) + 3


def test_fit_terminates_on_a_huge_choice_that_never_fits() -> None:
    calls: list[int] = []
    bound = LINEAR_STEPS + 2 * math.log2(10**15) + 3

    def never(k: int) -> tuple[None, int]:
        calls.append(k)
        assert len(calls) <= bound, "one measure too many"
        return None, 10**9

    fitted = fit(never, 100, 10**15)
    assert fitted.choice == 0 and fitted.tokens == 10**9  # the least there is, over the budget


@given(st.lists(st.integers(0, 200), min_size=1, max_size=300), st.integers(0, 200), st.data())
def test_fit_never_answers_over_the_budget_whatever_the_counts_do(
    counts: list[int], budget: int, data: st.DataObject
) -> None:
    """A count that does not grow with k (a fold line appearing where a line went) breaks no promise but
    "largest": what is answered was measured within the budget, or is the least choice."""
    estimate = data.draw(st.integers(0, len(counts)))
    calls: list[int] = []

    def measure(k: int) -> tuple[int, int]:
        calls.append(k)
        return k, counts[k % len(counts)]

    fitted = fit(measure, budget, len(counts) - 1, lambda: estimate)
    assert fitted.tokens == counts[fitted.choice % len(counts)]
    assert fitted.tokens <= budget or fitted.choice == 0
    assert len(calls) <= LINEAR_STEPS + 2 * math.log2(len(counts)) + 3
