import pytest

from sawmill.orders import Line, Order


def make_order():
    order = Order("Hill & Sons")
    order.add("pine", "47x100", 2400, quantity=10)
    order.add("oak", "25x150", 900)
    return order


def test_add_prices_the_line():
    order = Order("Hill & Sons")
    line = order.add("pine", "47x100", 2400, quantity=10)
    assert line == Line("pine", 47, 100, 2400, 10, 5080)
    assert order.lines() == [line]


def test_quantity_and_length_must_be_at_least_one():
    order = Order("Hill & Sons")
    with pytest.raises(ValueError):
        order.add("pine", "47x100", 2400, quantity=0)
    with pytest.raises(ValueError):
        order.add("pine", "47x100", 0)
    assert order.lines() == []


def test_lines_of_one_species():
    order = make_order()
    assert [line.length for line in order.lines("oak")] == [900]


def test_pieces_volume_and_total():
    order = make_order()
    assert order.pieces() == 11
    assert order.volume() == 10 * 11_280_000 + 3_375_000
    assert order.total() == 5080 + 608
