from sawmill.delivery import delivery_charge
from sawmill.orders import Order


def order_of(quantity, species, section, length):
    order = Order("Hill & Sons")
    order.add(species, section, length, quantity=quantity)
    return order


def test_part_of_a_cubic_metre():
    assert delivery_charge(order_of(10, "pine", "47x100", 2400)) == 3500


def test_more_than_one_cubic_metre():
    assert delivery_charge(order_of(12, "spruce", "100x200", 5000)) == 4500


def test_exactly_one_cubic_metre():
    assert delivery_charge(order_of(10, "spruce", "100x200", 5000)) == 3500


def test_free_from_500_pounds():
    assert delivery_charge(order_of(10, "spruce", "100x250", 5000)) == 0
    assert delivery_charge(order_of(13, "spruce", "100x200", 5000)) == 0
