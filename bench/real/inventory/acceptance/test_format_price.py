from inventory.money import format_price


def test_examples():
    assert format_price(123456) == "$1,234.56"
    assert format_price(5) == "$0.05"
    assert format_price(100) == "$1.00"
