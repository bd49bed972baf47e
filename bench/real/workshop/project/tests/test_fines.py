from datetime import date

from lending.fines import days_late, fine


def test_days_late_counts_days_after_the_due_date():
    assert days_late(date(2024, 5, 1), date(2024, 5, 6)) == 5


def test_days_late_is_zero_when_early():
    assert days_late(date(2024, 5, 6), date(2024, 5, 1)) == 0


def test_no_fine_within_the_grace_days():
    assert fine(0) == 0
    assert fine(3) == 0


def test_fine_per_day_after_the_grace_days():
    assert fine(5) == 40
