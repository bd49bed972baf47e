import pytest

from sawmill.orders import Order
from sawmill.timber import OverlengthError, piece_price


def test_is_a_value_error():
    assert issubclass(OverlengthError, ValueError)


def test_pricing_a_piece_that_is_too_long():
    with pytest.raises(OverlengthError) as caught:
        piece_price("larch", 47, 150, 7200)
    assert "7200" in str(caught.value)


def test_adding_a_piece_that_is_too_long():
    order = Order("Hill & Sons")
    order.add("oak", "25x150", 900)
    before = order.lines()
    with pytest.raises(OverlengthError):
        order.add("pine", "47x100", 6001)
    assert order.lines() == before


def test_six_metres_is_still_allowed():
    assert piece_price("spruce", 100, 200, 6000) == 4800
    order = Order("Hill & Sons")
    line = order.add("pine", "47x100", 6000)
    assert order.lines() == [line]
    assert line.length == 6000
