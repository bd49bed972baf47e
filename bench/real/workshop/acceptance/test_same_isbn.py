import pytest

from lending.isbn import same_isbn


def test_same_book_written_differently():
    assert same_isbn("0-306-40615-2", "0306406152") is True


def test_different_books():
    assert same_isbn("0306406152", "9780306406157") is False


def test_an_invalid_isbn_raises():
    with pytest.raises(ValueError):
        same_isbn("12-34", "0306406152")
