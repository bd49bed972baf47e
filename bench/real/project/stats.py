"""Small statistics helpers."""


def mean(values):
    """Return the arithmetic mean of a list of numbers."""
    return sum(values) / len(values)
