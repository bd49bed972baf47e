import pytest

from foundry.alloys import format_weight


def test_grams_under_a_kilogram():
    assert format_weight(850) == "850 g"
    assert format_weight(999) == "999 g"
    assert format_weight(0) == "0 g"


def test_kilograms_with_one_decimal():
    assert format_weight(1000) == "1.0 kg"
    assert format_weight(540000) == "540.0 kg"


def test_rounded_to_a_hundred_grams():
    assert format_weight(12345) == "12.3 kg"


def test_halves_go_up():
    assert format_weight(12350) == "12.4 kg"
    assert format_weight(1950) == "2.0 kg"


def test_negative_weight():
    with pytest.raises(ValueError):
        format_weight(-1)
