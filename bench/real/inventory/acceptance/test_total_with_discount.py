from inventory.pricing import total_with_discount


def test_examples():
    assert total_with_discount([1000, 500], 10) == 1350
    assert total_with_discount([], 25) == 0
    assert total_with_discount([999], 0) == 999
