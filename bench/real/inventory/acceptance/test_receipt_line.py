from inventory.money import receipt_line


def test_examples():
    assert receipt_line("Apple", 250) == "Apple: $2.50"
    assert receipt_line("TV", 129900) == "TV: $1,299.00"
