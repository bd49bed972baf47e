import pytest

from lending.isbn import normalize_isbn


def test_hyphens_are_dropped():
    assert normalize_isbn("0-306-40615-2") == "0306406152"


def test_spaces_are_dropped():
    assert normalize_isbn(" 978 0 306 40615 7 ") == "9780306406157"


def test_too_short_raises():
    with pytest.raises(ValueError):
        normalize_isbn("12-34")


def test_a_letter_raises():
    with pytest.raises(ValueError):
        normalize_isbn("030640615A")
