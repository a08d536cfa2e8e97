"""The header of a page snapshot or diff: the page, what was shown of it and why, the breadcrumb, the caller's
note, the action's outcome, and a `# Tokens: N` line that counts the whole text. Pure functions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lookout.core.budget import self_counted
from lookout.core.tokens import count_tokens

if TYPE_CHECKING:
    from lookout.browser.snapshot_view import PageContext


def header_lines(ctx: PageContext, shown: int, total: int, reason: str | None) -> list[str]:
    lines = [f"# Page: {ctx.title or '(untitled)'} — {ctx.url}"]
    lines.append(f"# Elements: {shown} of {total}" + (f" (truncated: {reason})" if reason else ""))
    if ctx.history:
        lines.append("# Navigation: " + " → ".join([*ctx.history, ctx.title or ctx.url]))
    if ctx.note:
        lines.append(f"# {ctx.note}")
    return lines + outcome_lines(ctx)


def outcome_lines(ctx: PageContext) -> list[str]:
    return [f"# Outcome: {line}" for line in ctx.outcome]


def header_cost(ctx: PageContext, total: int) -> int:
    return count_tokens("\n".join(header_lines(ctx, total, total, "token budget"))) + 8


def with_token_line(header: list[str], body: list[str]) -> tuple[str, int]:
    """The text with a `# Tokens: N` line where N is the count of the text itself."""
    return self_counted(lambda tokens: "\n".join([*header, f"# Tokens: {tokens}", *body]))
