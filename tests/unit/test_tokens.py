"""Token counts come from the real o200k_base tokenizer."""
from lookout.core.tokens import count_tokens


def test_known_counts() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("x" * 100_000) < 100_000 // 2
    assert count_tokens("<|endoftext|>") > 1  # special-token text is ordinary text here


def test_a_load_in_the_background_is_started_once_and_counts_wait_for_it() -> None:
    import threading

    from lookout.core import tokens

    before = {t.name for t in threading.enumerate()}
    for _ in range(3):  # a daemon taking many terminals up asks for it for each
        tokens.load_in_background()
    loading = [t for t in threading.enumerate() if t.name == "tokenizer" and t.name not in before]
    assert len(loading) <= 1, "more than one load was started"
    assert count_tokens("hello world") == 2
