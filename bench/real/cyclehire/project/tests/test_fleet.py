import pytest

from cyclehire.fleet import Fleet


def make_fleet():
    fleet = Fleet("Riverside")
    fleet.add_bike("B1", "road")
    fleet.add_bike("B2", "city")
    fleet.add_bike("B3", "city")
    return fleet


def test_new_bikes_are_available():
    fleet = make_fleet()
    assert fleet.available() == ["B1", "B2", "B3"]
    assert fleet.kind("B2") == "city"


def test_rent_and_return():
    fleet = make_fleet()
    fleet.rent("B2", "ann")
    assert fleet.is_rented("B2")
    assert fleet.available() == ["B1", "B3"]
    assert fleet.return_bike("B2") == "ann"
    assert not fleet.is_rented("B2")


def test_a_rented_bike_cannot_be_rented_again():
    fleet = make_fleet()
    fleet.rent("B1", "ann")
    with pytest.raises(ValueError):
        fleet.rent("B1", "bob")


def test_a_bike_is_added_only_once():
    fleet = make_fleet()
    with pytest.raises(ValueError):
        fleet.add_bike("B1", "road")


def test_available_of_one_kind():
    fleet = make_fleet()
    assert fleet.available("city") == ["B2", "B3"]
