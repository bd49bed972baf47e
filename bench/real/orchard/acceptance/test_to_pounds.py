from orchard.units import to_pounds


def test_one_kilogram():
    assert to_pounds(1000) == 2.2


def test_ten_pounds():
    assert to_pounds(4536) == 10.0


def test_full_crate():
    assert to_pounds(18000) == 39.7


def test_zero():
    assert to_pounds(0) == 0.0
