"""NonceFilter: the shell integration's nonce never reaches what lookout stores or shows, whole or in part,
however the output is split into reads; everything else passes unchanged and offsets stay true."""
from __future__ import annotations

from app.terminal.nonce_filter import NonceFilter

NONCE = "0123456789abcdef0123456789abcdef"
MARK = f"\x1b]133;D;0;nonce={NONCE}\x07".encode()
MASKED = b"\x1b]133;D;0;nonce=" + b"*" * 32 + b"\x07"


def _through(chunks: list[bytes]) -> tuple[list[bytes], bytes, bytes]:
    """Every redacted piece as released, and the whole stream as read and as shown."""
    nonce_filter = NonceFilter(NONCE)
    released = [nonce_filter.feed(chunk) for chunk in chunks] + [nonce_filter.feed(b"", final=True)]
    return [shown for _, shown in released], b"".join(r for r, _ in released), b"".join(s for _, s in released)


def test_every_split_of_a_mark_masks_the_whole_nonce() -> None:
    stream = b"before" + MARK + b"after " + MARK
    for cut in range(len(stream) + 1):
        pieces, read, shown = _through([stream[:cut], stream[cut:]])
        assert read == stream and shown == b"before" + MASKED + b"after " + MASKED
        assert all(NONCE[:2].encode() not in piece for piece in pieces), f"a part of the nonce shown (cut {cut})"


def test_output_without_the_nonce_is_not_held() -> None:
    nonce_filter = NonceFilter(NONCE)
    for chunk in (b"n", b"nonce=", b"nonce=f", b"nonce=0x", b"plain text", b"nonce=" + NONCE[:5].encode() + b"!"):
        assert nonce_filter.feed(chunk) == (chunk, chunk)


def test_a_held_tail_comes_with_the_next_read() -> None:
    nonce_filter = NonceFilter(NONCE)
    assert nonce_filter.feed(b"abc nonce=0123") == (b"abc nonce=", b"abc nonce=")
    assert nonce_filter.feed(b"4 and more") == (b"01234 and more", b"01234 and more")
