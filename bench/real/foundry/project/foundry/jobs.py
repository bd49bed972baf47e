"""Jobs: the castings a customer has ordered from the foundry.

Each line of a job is a number of identical castings of one part, poured in
one alloy, weighed when the line is added.
"""

from dataclasses import dataclass

from .alloys import casting_weight, get_alloy, metal_cost


@dataclass(frozen=True)
class Casting:
    """Some identical castings on a job.

    ``volume`` is the volume of one casting in cubic centimetres and
    ``weight`` the weight of one casting in grams.
    """

    part: str
    alloy: str
    volume: int
    quantity: int
    weight: int


class Job:
    """One customer's job, line by line."""

    def __init__(self, customer):
        """An empty job for ``customer``."""
        self.customer = customer
        self._castings = []

    def add(self, part, alloy, volume, quantity=1):
        """Adds ``quantity`` castings of ``part`` in ``alloy``, each ``volume`` cm³.

        The alloy is stored under its own name (``"Bronze"`` becomes
        ``"bronze"``). Returns the new ``Casting``. Raises ``ValueError`` if the
        quantity or the volume is below 1, and ``KeyError`` for an alloy the
        foundry does not pour.
        """
        if quantity < 1:
            raise ValueError(f"quantity must be at least 1, not {quantity}")
        if volume < 1:
            raise ValueError(f"volume must be at least 1 cm³, not {volume}")
        name = get_alloy(alloy).name
        casting = Casting(part, name, volume, quantity, casting_weight(name, volume))
        self._castings.append(casting)
        return casting

    def castings(self, alloy=None):
        """The lines in the order they were added; only those in ``alloy`` if given."""
        return [casting for casting in self._castings if alloy is None or casting.alloy == alloy]

    def pieces(self):
        """How many castings the job is for, over all its lines."""
        return sum(casting.quantity for casting in self._castings)

    def metal_weight(self):
        """The weight in grams of all the castings on the job."""
        return sum(casting.weight * casting.quantity for casting in self._castings)

    def metal_cost(self):
        """The price in pence of the metal, each line priced (and rounded) on its own."""
        return sum(metal_cost(casting.alloy, casting.weight * casting.quantity)
                   for casting in self._castings)
