"""What a member owes for a book brought back late."""

# Cents charged for each day late after the grace days.
DAILY_FINE = 20
# Days late that cost nothing.
GRACE_DAYS = 3
# The most the library charges for one book, however late, in cents.
MAX_FINE = 1000


def days_late(due, returned):
    """Whole days between the due date and the day the book came back (both
    `datetime.date`); 0 when it came back on time or early."""
    return max((returned - due).days, 0)


def fine(days):
    """The fine in cents for a book `days` days late: nothing within the grace days, then
    DAILY_FINE for each day after them, never more than MAX_FINE."""
    if days <= GRACE_DAYS:
        return 0
    return (days - GRACE_DAYS) * DAILY_FINE
