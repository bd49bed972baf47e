import pytest

from inventory.cart import Cart


def test_zero_and_negative_quantities_are_refused():
    cart = Cart()
    for quantity in (0, -2):
        with pytest.raises(ValueError):
            cart.add("apple", quantity)
    assert cart.total_items() == 0


def test_positive_quantities_still_add():
    cart = Cart()
    cart.add("apple", 2)
    assert cart.quantity("apple") == 2
