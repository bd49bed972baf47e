import pytest

from sawmill.timber import format_volume


def test_one_board():
    assert format_volume(11280000) == "0.011 m³"


def test_whole_and_zero_volumes():
    assert format_volume(2500000000) == "2.500 m³"
    assert format_volume(0) == "0.000 m³"


def test_rounds_to_three_places():
    assert format_volume(12345678900) == "12.346 m³"


def test_halves_go_up():
    assert format_volume(1500000) == "0.002 m³"
    assert format_volume(1499999) == "0.001 m³"


def test_rejects_a_negative_volume():
    with pytest.raises(ValueError):
        format_volume(-1)
