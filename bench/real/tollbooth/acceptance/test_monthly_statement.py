from tollbooth.statement import monthly_statement
from tollbooth.trips import Account


def make_account():
    account = Account("Ann Lee")
    account.register("AB12CDE", "car")
    account.record_trip("AB12CDE", "2026-03-02", "08:15")
    account.record_trip("AB12CDE", "2026-03-02", "12:40")
    account.record_trip("AB12CDE", "2026-04-01", "12:00")
    return account


def test_several_trips():
    assert monthly_statement(make_account(), "2026-03") == "Ann Lee, 2026-03: 2 trips, £7.50"


def test_one_trip():
    assert monthly_statement(make_account(), "2026-04") == "Ann Lee, 2026-04: 1 trip, £3.00"


def test_no_trips():
    assert monthly_statement(make_account(), "2026-05") == "Ann Lee, 2026-05: 0 trips, £0.00"
