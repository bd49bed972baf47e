"""Sawn timber: its sizes and what a piece of it costs.

A piece has a species, a section (its thickness and width, written like
``"47x100"``) and a length. All sizes are whole millimetres and all money is
whole pence, so that sums never drift. The yard prices timber by volume.
"""

import re

# The price in pence of one cubic metre of timber, by species.
PRICE_PER_CUBIC_METRE = {"spruce": 40000, "pine": 45000, "larch": 60000, "oak": 180000}

# How many cubic millimetres make one cubic metre.
CUBIC_MM_PER_CUBIC_METRE = 1000 ** 3

_SECTION = re.compile(r"^(\d+)\s*[xX]\s*(\d+)$")


def parse_section(text):
    """The ``(thickness, width)`` in millimetres of a section written ``"47x100"``.

    Spaces around the ``x`` and a capital ``X`` are accepted, as are spaces
    around the whole. Raises ``ValueError`` for anything that is not a
    section, and for a side of zero.
    """
    match = _SECTION.match(text.strip())
    if match is None:
        raise ValueError(f"not a section: {text!r}")
    thickness, width = int(match.group(1)), int(match.group(2))
    if thickness == 0 or width == 0:
        raise ValueError(f"not a section: {text!r}")
    return thickness, width


def piece_volume(thickness, width, length):
    """The volume in cubic millimetres of one piece of the given sizes."""
    return thickness * width * length


def piece_price(species, thickness, width, length):
    """The price in pence of one piece of ``species``, rounded up to a whole penny."""
    rate = PRICE_PER_CUBIC_METRE[species]
    volume = piece_volume(thickness, width, length)
    return -(-rate * volume // CUBIC_MM_PER_CUBIC_METRE)


def known_species():
    """The species the yard sells, in alphabetical order."""
    return sorted(PRICE_PER_CUBIC_METRE)
