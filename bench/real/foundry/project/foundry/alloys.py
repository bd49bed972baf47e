"""Casting alloys: what they weigh, how much they shrink and what they cost.

All lengths are whole millimetres, volumes whole cubic centimetres, weights
whole grams and money whole pence, so that sums never drift.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Alloy:
    """An alloy the foundry pours.

    ``density`` is in kilograms per cubic metre (the same as grams per litre),
    ``shrinkage`` in thousandths of a length (a casting of an alloy with a
    shrinkage of 13 comes out 1.3 % shorter than its pattern), and
    ``price_per_kg`` is the price of the metal in pence.
    """

    name: str
    density: int
    shrinkage: int
    price_per_kg: int


ALLOYS = {
    "aluminium": Alloy("aluminium", 2700, 13, 350),
    "brass": Alloy("brass", 8500, 15, 900),
    "bronze": Alloy("bronze", 8800, 15, 1200),
    "iron": Alloy("iron", 7200, 10, 150),
}


def get_alloy(name):
    """The ``Alloy`` called ``name``; case and spaces around it do not matter.

    Raises ``KeyError`` for an alloy the foundry does not pour.
    """
    return ALLOYS[name.strip().lower()]


def known_alloys():
    """The names of the alloys the foundry pours, in alphabetical order."""
    return sorted(ALLOYS)


def casting_weight(alloy, volume):
    """The weight in grams of ``volume`` cubic centimetres of ``alloy``, rounded up to a gram."""
    density = get_alloy(alloy).density
    return -(-volume * density // 1000)


def pattern_length(alloy, casting_mm):
    """How long in mm the pattern must be for a casting ``casting_mm`` long.

    The metal shrinks as it cools, so the pattern is made longer by the
    alloy's shrinkage: ``casting_mm`` times (1000 + shrinkage) / 1000, rounded
    to the nearest millimetre (an exact half goes up). Raises ``ValueError``
    for a length below 1 mm.
    """
    if casting_mm < 1:
        raise ValueError(f"a casting must be at least 1 mm long, not {casting_mm}")
    shrinkage = get_alloy(alloy).shrinkage
    return (casting_mm * (1000 + shrinkage) + 500) // 1000


def metal_cost(alloy, grams):
    """The price in pence of ``grams`` of ``alloy``, rounded up to a whole penny."""
    return -(-grams * get_alloy(alloy).price_per_kg // 1000)
