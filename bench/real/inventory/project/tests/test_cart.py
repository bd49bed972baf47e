from inventory.cart import Cart


def test_add_counts_quantities():
    cart = Cart()
    cart.add("apple", 2)
    cart.add("apple")
    cart.add("pear")
    assert cart.quantity("apple") == 3
    assert cart.total_items() == 4
