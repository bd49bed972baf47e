from datetime import date

from lending.fines import fine_between


def test_eight_days_late():
    assert fine_between(date(2024, 3, 1), date(2024, 3, 9)) == 100


def test_early_costs_nothing():
    assert fine_between(date(2024, 3, 9), date(2024, 3, 1)) == 0


def test_on_the_due_date_costs_nothing():
    assert fine_between(date(2024, 3, 9), date(2024, 3, 9)) == 0
