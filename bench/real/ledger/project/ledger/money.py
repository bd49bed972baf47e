"""Amounts of money as people type them."""


def parse_amount(text):
    """Reads `12.34`, `12.5` or `12` (dollars) and returns the amount in cents.

    Raises ValueError for anything that is not such an amount.
    """
    text = text.strip()
    dollars, _, cents = text.partition(".")
    if not dollars.isdigit() or (cents and not cents.isdigit()) or len(cents) > 2:
        raise ValueError(f"not an amount: {text!r}")
    return int(dollars) * 100 + int(cents.ljust(2, "0") or 0)
