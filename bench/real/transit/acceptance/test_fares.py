import pytest

from transit.fares import fare


def test_single_zone():
    assert fare(1) == 250


def test_additional_zones_add_100():
    assert fare(3) == 450


def test_concession_is_half_price():
    assert fare(3, concession=True) == 225


def test_zero_zones_is_an_error():
    with pytest.raises(ValueError):
        fare(0)
