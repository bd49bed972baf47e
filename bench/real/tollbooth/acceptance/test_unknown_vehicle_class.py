import pytest

from tollbooth.rates import UnknownVehicleClassError, toll
from tollbooth.trips import Account


def test_is_a_value_error():
    assert issubclass(UnknownVehicleClassError, ValueError)


def test_toll_for_an_unknown_class():
    with pytest.raises(UnknownVehicleClassError) as caught:
        toll("tractor", 600)
    assert "tractor" in str(caught.value)


def test_registering_an_unknown_class():
    account = Account("Ann Lee")
    with pytest.raises(UnknownVehicleClassError):
        account.register("XY99ZZZ", "tractor")


def test_known_classes_still_work():
    assert toll("car", 600) == 300
    account = Account("Ann Lee")
    account.register("AB12CDE", "car")
    assert account.vehicle_class("AB12CDE") == "car"
