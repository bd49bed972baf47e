"""Helpers for turning raw marks into percentages and letter grades.

A score is a percentage between 0 and 100. Letter grades follow the usual
scale: 90 and above is an A, 80 and above a B, 70 and above a C, 60 and
above a D, and anything lower an F.
"""

from __future__ import annotations

GRADE_SCALE: list[tuple[float, str]] = [
    (90.0, "A"),
    (80.0, "B"),
    (70.0, "C"),
    (60.0, "D"),
]


def percentage(points: float, possible: float) -> float:
    """Return ``points`` out of ``possible`` as a percentage, rounded to one decimal.

    >>> percentage(17, 20)
    85.0
    """
    return round(points / possible * 100, 1)


def letter_grade(percent: float) -> str:
    """Return the letter grade for a percentage.

    >>> letter_grade(85)
    'B'
    """
    for threshold, letter in GRADE_SCALE:
        if percent > threshold:
            return letter
    return "F"


def average(values: list[float]) -> float:
    """Return the mean of ``values``, or ``0.0`` for an empty list.

    >>> average([80, 90])
    85.0
    """
    if not values:
        return 0.0
    return sum(values) / len(values)
