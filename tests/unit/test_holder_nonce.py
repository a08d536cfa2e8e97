"""NonceFilter: the shell integration's nonce never reaches what lookout stores or shows, whole or in part,
however the output is split into reads; everything else passes unchanged and offsets stay true."""

from __future__ import annotations

from lookout.terminal.holder.nonce import NonceFilter

NONCE = "0123456789abcdef0123456789abcdef"
MARK = f"\x1b]133;D;0;nonce={NONCE}\x07".encode()
MASKED = b"\x1b]133;D;0;nonce=" + b"*" * 32 + b"\x07"


def _through(chunks: list[bytes]) -> tuple[list[bytes], list[int]]:
    """Every masked piece as released, and where the nonces start in the whole stream shown."""
    nonce_filter = NonceFilter(NONCE)
    pieces: list[bytes] = []
    found: list[int] = []
    for chunk, final in [*((c, False) for c in chunks), (b"", True)]:
        base = sum(map(len, pieces))
        pieces.append(nonce_filter.feed(chunk, final))
        found += [base + pos for pos in nonce_filter.positions]
    return pieces, found


def test_every_split_of_a_mark_masks_the_whole_nonce_and_says_where_it_was() -> None:
    stream = b"before" + MARK + b"after " + MARK
    nonce_at = [len(b"before\x1b]133;D;0;nonce="), len(b"before" + MARK + b"after \x1b]133;D;0;nonce=")]
    for cut in range(len(stream) + 1):
        pieces, found = _through([stream[:cut], stream[cut:]])
        assert b"".join(pieces) == b"before" + MASKED + b"after " + MASKED
        assert all(NONCE[:2].encode() not in piece for piece in pieces), f"a part of the nonce shown (cut {cut})"
        assert found == nonce_at, f"cut {cut}"


def test_output_without_the_nonce_is_not_held() -> None:
    nonce_filter = NonceFilter(NONCE)
    for chunk in (b"n", b"nonce=", b"nonce=f", b"nonce=0x", b"plain text", b"nonce=" + NONCE[:5].encode() + b"!"):
        assert nonce_filter.feed(chunk) == chunk and nonce_filter.positions == []


def test_a_held_tail_comes_with_the_next_read() -> None:
    nonce_filter = NonceFilter(NONCE)
    assert nonce_filter.feed(b"abc nonce=0123") == b"abc nonce="
    assert nonce_filter.feed(b"4 and more") == b"01234 and more"
