"""Token counts come from the real o200k_base tokenizer."""
from lookout.core.tokens import count_tokens, load_soon


def test_known_counts() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("x" * 100_000) < 100_000 // 2
    assert count_tokens("<|endoftext|>") > 1  # special-token text is ordinary text here


def test_load_soon_loads_once_in_a_thread_of_its_own() -> None:
    loader = load_soon()
    assert load_soon() is loader  # one load per process, however many opens ask for it
    assert loader.name == "tokenizer-load"
    loader.join()
    assert count_tokens("hello world") == 2
