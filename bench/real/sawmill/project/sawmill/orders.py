"""Customer orders: the pieces of timber a customer wants cut.

Each line of an order is a number of identical pieces, all of one species,
section and length, priced when the line is added.
"""

from dataclasses import dataclass

from .timber import parse_section, piece_price, piece_volume


@dataclass(frozen=True)
class Line:
    """Some identical pieces on an order and their price, in pence, together."""

    species: str
    thickness: int
    width: int
    length: int
    quantity: int
    price: int


class Order:
    """One customer's order, line by line."""

    def __init__(self, customer):
        """An empty order for ``customer``."""
        self.customer = customer
        self._lines = []

    def add(self, species, section, length, quantity=1):
        """Adds ``quantity`` pieces of ``species`` in ``section``, ``length`` mm long.

        Returns the new ``Line``. Raises ``ValueError`` if the quantity or the
        length is below 1, or if the section cannot be read.
        """
        if quantity < 1:
            raise ValueError(f"quantity must be at least 1, not {quantity}")
        if length < 1:
            raise ValueError(f"length must be at least 1 mm, not {length}")
        thickness, width = parse_section(section)
        price = piece_price(species, thickness, width, length) * quantity
        line = Line(species, thickness, width, length, quantity, price)
        self._lines.append(line)
        return line

    def lines(self, species=None):
        """The lines in the order they were added; only those of ``species`` if given."""
        return [line for line in self._lines if species is None or line.species == species]

    def pieces(self):
        """How many pieces the order is for, over all its lines."""
        return sum(line.quantity for line in self._lines)

    def volume(self):
        """The volume in cubic millimetres of all the pieces on the order."""
        return sum(piece_volume(line.thickness, line.width, line.length) * line.quantity
                   for line in self._lines)

    def total(self):
        """The price in pence of the whole order."""
        return sum(line.price for line in self._lines)
