import pytest

from cyclehire.pricing import format_pence, parse_duration, rental_cost


def test_parse_duration_in_hours_and_minutes():
    assert parse_duration("2h") == 120
    assert parse_duration("45m") == 45
    assert parse_duration(" 1H30M ") == 90


def test_parse_duration_rejects_other_text():
    with pytest.raises(ValueError):
        parse_duration("two hours")
    with pytest.raises(ValueError):
        parse_duration("")


def test_rental_cost_for_whole_hours():
    assert rental_cost(120, 450) == 900
    assert rental_cost(60, 300) == 300


def test_rental_cost_has_a_one_hour_minimum():
    assert rental_cost(10, 300) == 300


def test_format_pence():
    assert format_pence(350) == "£3.50"
    assert format_pence(1205) == "£12.05"
