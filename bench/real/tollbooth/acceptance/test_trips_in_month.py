from tollbooth.trips import Account


def make_account():
    account = Account("Ann Lee")
    account.register("AB12CDE", "car")
    account.register("VN65XYZ", "van")
    account.record_trip("AB12CDE", "2026-02-27", "12:00")
    account.record_trip("VN65XYZ", "2026-03-02", "08:15")
    account.record_trip("AB12CDE", "2026-04-01", "12:00")
    account.record_trip("AB12CDE", "2026-03-15", "17:30")
    return account


def test_days_of_the_month_in_recorded_order():
    account = make_account()
    assert [trip.day for trip in account.trips_in_month("2026-03")] == ["2026-03-02", "2026-03-15"]


def test_returns_the_recorded_trips():
    account = make_account()
    expected = [trip for trip in account.trips() if trip.day in ("2026-03-02", "2026-03-15")]
    assert account.trips_in_month("2026-03") == expected


def test_month_without_trips():
    assert make_account().trips_in_month("2025-03") == []
