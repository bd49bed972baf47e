from textkit import truncate


def test_short_text_unchanged():
    assert truncate("hello", 10) == "hello"
    assert truncate("abcdef", 6) == "abcdef"


def test_long_text_cut_to_width():
    assert truncate("hello world", 8) == "hello..."
    assert len(truncate("a" * 50, 20)) == 20
