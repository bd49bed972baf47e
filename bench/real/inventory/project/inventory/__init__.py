"""A shop's cart and prices. Amounts are integers of cents."""
