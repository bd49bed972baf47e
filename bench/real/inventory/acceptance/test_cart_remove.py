import pytest

from inventory.cart import Cart


def test_remove_takes_the_item_out():
    cart = Cart()
    cart.add("apple", 3)
    cart.add("pear")
    cart.remove("apple")
    assert cart.quantity("apple") == 0
    assert cart.total_items() == 1


def test_remove_of_an_unknown_item_raises_key_error():
    with pytest.raises(KeyError):
        Cart().remove("kiwi")
