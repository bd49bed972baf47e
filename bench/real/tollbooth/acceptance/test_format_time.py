import pytest

from tollbooth.rates import format_time, parse_time


def test_morning_time():
    assert format_time(450) == "07:30"


def test_ends_of_the_day():
    assert format_time(0) == "00:00"
    assert format_time(1439) == "23:59"


def test_round_trip_with_parse_time():
    assert format_time(parse_time("16:05")) == "16:05"


def test_minutes_outside_the_day():
    with pytest.raises(ValueError):
        format_time(1440)
    with pytest.raises(ValueError):
        format_time(-1)
