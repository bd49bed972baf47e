"""Prices in cents."""


def apply_discount(amount, percent):
    """`amount` cents less `percent` per cent, rounded down to a whole cent."""
    return amount * (100 - percent) // 100
