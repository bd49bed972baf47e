import pytest

from orchard.pricing import load_value


def test_simple_value():
    assert load_value(2500, 180) == 450


def test_rounded_to_whole_cents():
    assert load_value(333, 100) == 33


def test_bulk_discount_from_100_kg():
    assert load_value(100000, 200) == 18000
    assert load_value(99000, 200) == 19800


def test_negative_price_rejected():
    with pytest.raises(ValueError):
        load_value(1000, -5)
