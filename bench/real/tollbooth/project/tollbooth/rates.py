"""What one pass through the toll costs.

The charge depends on the vehicle class and on the time of day: passes in
the morning and evening peaks cost half as much again. Money is whole pence
and a time of day is whole minutes after midnight, so that sums never drift.
"""

import re

# The charge in pence for one pass outside the peaks, by vehicle class.
BASE_CHARGES = {"motorcycle": 150, "car": 300, "van": 500, "lorry": 1000}

# The peaks, as (start, end) minutes after midnight: the start is inside the
# peak, the end is not.
PEAK_PERIODS = [(7 * 60, 10 * 60), (16 * 60, 19 * 60)]

# How much more a pass in a peak costs, in percent of the base charge.
PEAK_SURCHARGE_PERCENT = 50

_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")


def parse_time(text):
    """Minutes after midnight of a clock time written ``"HH:MM"``.

    Accepts ``"7:05"`` as well as ``"07:05"``; surrounding spaces are
    ignored. Raises ``ValueError`` for anything that is not a time of day.
    """
    match = _TIME.match(text.strip())
    if match is None:
        raise ValueError(f"not a time: {text!r}")
    hours, minutes = int(match.group(1)), int(match.group(2))
    if hours > 23 or minutes > 59:
        raise ValueError(f"not a time: {text!r}")
    return hours * 60 + minutes


def is_peak(minute):
    """Whether ``minute`` (minutes after midnight) falls in a peak."""
    return any(start <= minute < end for start, end in PEAK_PERIODS)


def toll(vehicle_class, minute):
    """The charge in pence for a vehicle of ``vehicle_class`` passing at ``minute``."""
    charge = BASE_CHARGES[vehicle_class]
    if is_peak(minute):
        charge += charge * PEAK_SURCHARGE_PERCENT // 100
    return charge


def format_pence(pence):
    """An amount of pence as pounds for people, such as ``"£4.50"``."""
    pounds, rest = divmod(pence, 100)
    return f"£{pounds}.{rest:02d}"
