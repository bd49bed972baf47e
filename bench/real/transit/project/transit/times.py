"""Helpers for clock times written as ``"HH:MM"`` strings.

Internally a time is represented as the number of minutes after midnight,
which keeps arithmetic and comparisons simple.
"""

MINUTES_PER_HOUR = 60
MINUTES_PER_DAY = 24 * MINUTES_PER_HOUR


def to_minutes(text: str) -> int:
    """Convert an ``"HH:MM"`` string to minutes after midnight.

    >>> to_minutes("07:05")
    425
    """
    hours, minutes = text.strip().split(":")
    return int(hours) * MINUTES_PER_HOUR + int(minutes)


def from_minutes(total: int) -> str:
    """Format a number of minutes after midnight as ``"HH:MM"``.

    >>> from_minutes(425)
    '07:05'
    """
    hours, minutes = divmod(total, MINUTES_PER_HOUR)
    return f"{hours:02d}:{minutes:02d}"


def add_minutes(text: str, delta: int) -> str:
    """Return the time ``delta`` minutes after ``text``.

    A negative ``delta`` moves the time backwards.

    >>> add_minutes("07:05", 30)
    '07:35'
    """
    return from_minutes(to_minutes(text) + delta)
