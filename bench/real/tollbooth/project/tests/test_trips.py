import pytest

from tollbooth.trips import Account, Trip


def make_account():
    account = Account("Ann Lee")
    account.register("AB12CDE", "car")
    account.register("VN65XYZ", "van")
    return account


def test_register():
    account = make_account()
    assert account.vehicle_class("VN65XYZ") == "van"


def test_a_plate_is_registered_only_once():
    account = make_account()
    with pytest.raises(ValueError):
        account.register("AB12CDE", "van")


def test_record_trip_charges_the_toll():
    account = make_account()
    trip = account.record_trip("AB12CDE", "2026-03-02", "08:15")
    assert trip == Trip("AB12CDE", "2026-03-02", "08:15", 450)
    assert account.trips() == [trip]


def test_trips_of_one_plate_and_total():
    account = make_account()
    account.record_trip("AB12CDE", "2026-03-02", "12:00")
    account.record_trip("VN65XYZ", "2026-03-02", "12:30")
    account.record_trip("AB12CDE", "2026-03-03", "17:00")
    assert [trip.time for trip in account.trips("AB12CDE")] == ["12:00", "17:00"]
    assert account.total() == 300 + 500 + 450
