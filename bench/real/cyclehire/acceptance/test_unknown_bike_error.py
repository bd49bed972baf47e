import pytest

from cyclehire.fleet import Fleet, UnknownBikeError


def make_fleet():
    fleet = Fleet("Riverside")
    fleet.add_bike("B1", "road")
    return fleet


def test_unknown_bike_error_is_a_value_error():
    assert issubclass(UnknownBikeError, ValueError)


def test_renting_an_unknown_bike():
    fleet = make_fleet()
    with pytest.raises(UnknownBikeError) as caught:
        fleet.rent("X9", "ann")
    assert "X9" in str(caught.value)


def test_returning_an_unknown_bike():
    fleet = make_fleet()
    with pytest.raises(UnknownBikeError):
        fleet.return_bike("X9")


def test_known_bikes_still_rent_and_return():
    fleet = make_fleet()
    fleet.rent("B1", "ann")
    assert fleet.return_bike("B1") == "ann"
