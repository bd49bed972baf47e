"""Helpers for fruit weights.

Weights are kept as whole grams everywhere in the package. Text such as
``"2.5kg"`` or ``"300 g"`` can be turned into grams with ``parse_weight``.
"""

GRAMS_PER_KG = 1000
CRATE_CAPACITY = 18000  # grams of fruit in one standard picking crate

_UNITS = {"g": 1, "kg": GRAMS_PER_KG}


def parse_weight(text: str) -> int:
    """Convert a weight such as ``"2.5kg"`` or ``"300 g"`` to whole grams.

    >>> parse_weight("2.5kg")
    2500
    >>> parse_weight("300 g")
    300
    """
    cleaned = text.strip().lower().replace(" ", "")
    for unit in sorted(_UNITS, key=len, reverse=True):
        if cleaned.endswith(unit):
            number = float(cleaned[: -len(unit)])
            return round(number * _UNITS[unit])
    raise ValueError(f"unknown weight unit in {text!r}")


def format_weight(grams: int) -> str:
    """Show a weight to people: grams below one kilogram, kilograms above.

    >>> format_weight(350)
    '350 g'
    >>> format_weight(2500)
    '2.50 kg'
    """
    if grams < GRAMS_PER_KG:
        return f"{grams} g"
    return f"{grams / GRAMS_PER_KG:.2f} kg"


def crates_needed(grams: int, crate_capacity: int = CRATE_CAPACITY) -> int:
    """Return how many crates are needed to carry ``grams`` of fruit.

    >>> crates_needed(20000)
    2
    """
    return grams // crate_capacity + 1
