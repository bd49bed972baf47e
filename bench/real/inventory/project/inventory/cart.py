"""The shopping cart."""


class Cart:
    """Items by SKU, each with a quantity."""

    def __init__(self):
        self.items = {}

    def add(self, sku, quantity=1):
        """Adds `quantity` of the item `sku`."""
        self.items[sku] = self.items.get(sku, 0) + quantity

    def quantity(self, sku):
        """How many of `sku` the cart holds (0 when none)."""
        return self.items.get(sku, 0)

    def total_items(self):
        """How many items the cart holds in all."""
        return sum(self.items.values())
