from inventory.pricing import apply_discount


def test_discount():
    assert apply_discount(1000, 10) == 900
    assert apply_discount(999, 50) == 499
