from textkit import word_count


def test_words():
    assert word_count("hello big world") == 3


def test_empty_and_spaces():
    assert word_count("") == 0
    assert word_count("  a   b ") == 2
    assert word_count("one\ttwo\nthree") == 3
