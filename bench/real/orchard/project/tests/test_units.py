import pytest

from orchard.units import crates_needed, format_weight, parse_weight


def test_parse_weight_in_kilograms_and_grams():
    assert parse_weight("2.5kg") == 2500
    assert parse_weight("300 g") == 300
    assert parse_weight(" 1 KG ") == 1000


def test_parse_weight_rejects_unknown_units():
    with pytest.raises(ValueError):
        parse_weight("3 stone")


def test_format_weight():
    assert format_weight(350) == "350 g"
    assert format_weight(2500) == "2.50 kg"


def test_crates_needed_for_a_partial_crate():
    assert crates_needed(20000) == 2
    assert crates_needed(500) == 1
