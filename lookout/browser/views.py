"""What a snapshot request shows: the budgeted view, a subtree (`expand`), or a diff against an earlier
snapshot when that is worth it (a full view that says why otherwise). Pure: raw snapshot text in, text
and metadata out (with every ref of the raw text, for the ref checks of later actions); the last few answers
are kept by their inputs, so a page that did not change since the last snapshot is not parsed, rendered or
searched for refs again (the part of a snapshot's time that is lookout's own)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any, NamedTuple

from lookout.browser.aria import AriaNode, AriaParseError, parse, placed, refs_in
from lookout.browser.diff import FULL_ABOVE, diff, render_diff
from lookout.browser.search import subtree
from lookout.browser.snapshot_header import header_lines, outcome_lines
from lookout.browser.snapshot_view import PageContext, Snapshot, SnapshotOptions, render
from lookout.core.errors import BackendFailure, Conflict
from lookout.core.gc_tuning import gc_paused

ANSWERS_KEPT = 8
ANSWER_CHARS_KEPT = 8_000_000
"""At most this many characters of raw text are kept with the answers (a huge page's text is not kept)."""


class Answer(NamedTuple):
    text: str
    metadata: dict[str, Any]
    refs: frozenset[str]
    """Every ref of the raw snapshot (shown or folded): the nodes', never a "[ref=..]" in a page's text."""
    root: AriaNode | None = None
    """The parsed tree, when it was parsed for this answer (None for a kept answer)."""
    by_position: bool = True
    """The nodes' boxes could have changed the text: a read without them must be made again with them."""
    placed: bool = True
    """The refs' boxes given (`places`) placed every node with a top-document ref (lookout.browser.ref_places)."""


class Earlier(NamedTuple):
    """The snapshot a diff is against: its obs_id, URL and parsed tree."""

    obs_id: str
    url: str
    root: AriaNode


_answers: OrderedDict[tuple[Any, ...], Answer] = OrderedDict()
"""The last answers by their inputs (the raw text, options, context, the obs_id diffed against, expand)."""
_answers_lock = threading.Lock()


def snapshot_text(
    raw: str,
    options: SnapshotOptions,
    ctx: PageContext,
    before: Earlier | None,
    expand: str | None = None,
    places: str | None = None,
) -> Answer:
    """The text and metadata of a snapshot: a diff against `before` when it is worth it, else full (only
    the subtree of `expand`, when given); and the refs of `raw`. `places`: the boxes of its refs, when `raw`
    has none (lookout.browser.ref_places)."""
    key = (raw, places, options, ctx, None if before is None else before.obs_id, expand)  # observations never change
    with _answers_lock:
        kept = _answers.get(key)
        if kept is not None:
            _answers.move_to_end(key)
            return kept._replace(metadata=dict(kept.metadata))
    try:
        with gc_paused():  # tens of thousands of nodes on a big page: the collector would double the time
            root = parse(raw)
            complete = places is None or placed(root, places)
            text, metadata, by_position = _view_of(root, options, ctx, before, expand)
    except AriaParseError as exc:
        raise BackendFailure(f"the page's accessibility snapshot could not be read: {exc}") from exc
    answer = Answer(text, metadata, refs_in(root), root, by_position, complete)
    if len(raw) <= ANSWER_CHARS_KEPT:
        with _answers_lock:
            _answers[key] = answer._replace(metadata=dict(metadata), root=None)
            while (
                len(_answers) > ANSWERS_KEPT or sum(len(k[0]) + len(k[1] or "") for k in _answers) > ANSWER_CHARS_KEPT
            ):
                _answers.popitem(last=False)
    return answer


def forget_answers() -> None:
    """Drop the kept answers (a benchmark's first snapshot must not find one)."""
    with _answers_lock:
        _answers.clear()


def _view_of(
    root: AriaNode, options: SnapshotOptions, ctx: PageContext, before: Earlier | None, expand: str | None
) -> tuple[str, dict[str, Any], bool]:
    """The text, its metadata, and whether the nodes' boxes could have changed it (a diff never uses them)."""
    if expand is not None:
        found = subtree(root, expand)
        if found is None:
            raise Conflict(f"ref {expand} is not on the page any more: snapshot again")
        root = found
    if before is not None:
        since = before.obs_id
        if before.url != ctx.url:
            ctx = replace(ctx, note=f"Full snapshot: the URL changed since {since}")
        else:
            changes = diff(before.root, root)
            if changes.changed_share > FULL_ABOVE:
                ctx = replace(ctx, note=f"Full snapshot: {changes.changed_share:.0%} of the page changed since {since}")
            else:
                counts = {kind: sum(c.kind == kind for c in changes.changes) for kind in "+-~"}
                header = [
                    *header_lines(ctx, changes.total, changes.total, None)[:1],
                    *outcome_lines(ctx),
                    f"# Diff against {since}: {counts['+']} added, {counts['-']} removed, {counts['~']} changed",
                ]
                text, tokens, shown = render_diff(changes, header, options.max_tokens)
                return text, {"diff_against": since, "added": counts["+"], "removed": counts["-"],
                              "changed": counts["~"], "unchanged": changes.unchanged,
                              "truncated": shown < len(changes.changes), "tokens": tokens}, False  # fmt: skip
    view: Snapshot = render(root, options, ctx)
    return view.text, {"total_elements": view.total_elements, "included_elements": view.included_elements,
                       "truncated": view.truncated, "reason": view.reason, "tokens": view.tokens}, view.by_position  # fmt: skip
