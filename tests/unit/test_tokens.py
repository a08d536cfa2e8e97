"""Token counts come from the real o200k_base tokenizer."""
from lookout.core.tokens import count_tokens


def test_known_counts() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("x" * 100_000) < 100_000 // 2
    assert count_tokens("<|endoftext|>") > 1  # special-token text is ordinary text here

