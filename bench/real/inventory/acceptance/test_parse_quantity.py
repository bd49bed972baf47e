import pytest

from inventory.parse import parse_quantity


def test_numbers_with_blanks_around():
    assert parse_quantity(" 3 ") == 3
    assert parse_quantity("12") == 12


def test_not_a_whole_positive_number():
    for text in ("", "abc", "2.5", "-1"):
        with pytest.raises(ValueError):
            parse_quantity(text)
