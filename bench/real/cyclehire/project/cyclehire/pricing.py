"""Durations and prices for bike rentals.

Durations are whole minutes and money is whole pence, so that sums never
drift. Rentals are charged by the hour at the bike's hourly rate.
"""

import re

_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?$")


def parse_duration(text):
    """Minutes in a duration written as text.

    Accepts hours, minutes or both, such as ``"2h"``, ``"45m"`` or
    ``"1h30m"``; surrounding spaces and letter case are ignored.
    Raises ``ValueError`` for anything else.
    """
    cleaned = text.strip().lower().replace(" ", "")
    match = _DURATION.match(cleaned)
    if not cleaned or match is None:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes = match.groups()
    return int(hours or 0) * 60 + int(minutes or 0)


def rental_cost(minutes, hourly_rate):
    """Price in pence of a rental lasting ``minutes`` at ``hourly_rate`` pence.

    Every started hour is charged in full, and even the shortest rental
    costs at least one hour.
    """
    if minutes < 0:
        raise ValueError("a rental cannot last a negative time")
    hours = max(1, minutes // 60)
    return hours * hourly_rate


def format_pence(pence):
    """An amount of pence as pounds for people, such as ``"£3.50"``."""
    pounds, rest = divmod(pence, 100)
    return f"£{pounds}.{rest:02d}"
