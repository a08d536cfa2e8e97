"""The mechanics of every token-budgeted view; each domain keeps its policy (what goes first, how it renders).

- `self_counted`: a text that states its own token count (`"tokens": N`, `# Tokens: N`), N being the count
  of that very text.
- `within`: the estimate: how many items, taken in order, fit a budget at their own costs.
- `fit`: the check: the largest choice (a number of items, lines, ...) whose real count holds the budget,
  backing off from the estimate.

Pure functions; the token counter is o200k_base (lookout.core.tokens) unless a caller passes another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from lookout.core.tokens import count_tokens

T = TypeVar("T")
SELF_COUNT_ROUNDS = 4
"""A count moves only when the number of digits stating it does, so it settles in two or three rounds."""
LINEAR_STEPS = 16
"""`fit` backs off one at a time this many times (an estimate is off by little), then by doubling steps."""


def self_counted(render: Callable[[int], str], count: Callable[[str], int] = count_tokens) -> tuple[str, int]:
    """`render(n)` and n, for the n that equals the count of `render(n)`: the smallest such n, reached from 0
    (if the count has not settled after SELF_COUNT_ROUNDS, which no real text needs, the last count)."""
    n = 0
    text = render(n)
    for _ in range(SELF_COUNT_ROUNDS):
        counted = count(text)
        if counted == n:
            break
        n = counted
        text = render(n)
    return text, n


def within(costs: Iterable[float], budget: float) -> int:
    """How many of `costs`, from the first, fit in `budget` together (stopping at the first that does not)."""
    taken = 0
    for cost in costs:
        if cost > budget:
            break
        budget -= cost
        taken += 1
    return taken


@dataclass(frozen=True, slots=True)
class Fitted(Generic[T]):
    """The choice `fit` settled on, what `measure` made of it, and its token count."""

    choice: int
    value: T
    tokens: int


def fit(
    measure: Callable[[int], tuple[T, int]], budget: int, size: int, estimate: Callable[[], int] | None = None
) -> Fitted[T]:
    """The largest choice k in [0, size] whose `measure(k)` (a rendering and its real token count) is within
    `budget`, when the count grows with k, and no larger than `estimate()` if that is given.

    k = size is measured first. When it is over, `estimate()` (what the items' own costs say fits; called only
    then, and trusted when it holds) or else size - 1 is measured; while that is over, k backs off one at a
    time LINEAR_STEPS times, then by doubling steps, and the gap between the last choice over the budget and
    the first within it is bisected. Whatever `measure` does, the answer was measured within the budget or is
    k = 0 (returned even when it is over: it is the least there is), after at most
    LINEAR_STEPS + 2*log2(size) + 3 measures."""
    k = max(size, 0)
    value, tokens = measure(k)
    if tokens <= budget or k == 0:
        return Fitted(k, value, tokens)
    k = start = max(0, min(k - 1, estimate() if estimate is not None else k - 1))
    value, tokens = measure(k)
    over: int | None = None
    """The smallest choice the back-off measured over the budget."""
    step = 1
    while tokens > budget and k > 0:
        over = k
        k = max(k - step, 0)
        if start - k >= LINEAR_STEPS:
            step *= 2
        value, tokens = measure(k)
    best = Fitted(k, value, tokens)
    if tokens > budget:
        return best
    while over is not None and over - best.choice > 1:
        mid = (best.choice + over) // 2
        value, tokens = measure(mid)
        if tokens <= budget:
            best = Fitted(mid, value, tokens)
        else:
            over = mid
    return best
