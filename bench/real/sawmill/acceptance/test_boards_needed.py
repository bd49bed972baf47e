import pytest

from sawmill.orders import Order


def make_order():
    order = Order("Hill & Sons")
    order.add("pine", "47x100", 1200, quantity=7)
    order.add("oak", "25x150", 900, quantity=2)
    return order


def test_boards_of_4800():
    assert make_order().boards_needed(4800) == 4


def test_boards_of_6000():
    assert make_order().boards_needed(6000) == 3


def test_empty_order():
    assert Order("Hill & Sons").boards_needed(4800) == 0


def test_a_piece_longer_than_the_board():
    order = Order("Hill & Sons")
    order.add("pine", "47x100", 2400)
    with pytest.raises(ValueError):
        order.boards_needed(2000)
