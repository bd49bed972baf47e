from cyclehire.fleet import Fleet


def make_fleet():
    fleet = Fleet("Riverside")
    fleet.add_bike("B1", "road")
    fleet.add_bike("B2", "city")
    fleet.add_bike("B3", "city")
    return fleet


def test_rented_bikes_of_a_kind_are_left_out():
    fleet = make_fleet()
    fleet.rent("B2", "ann")
    assert fleet.available("city") == ["B3"]


def test_a_returned_bike_is_available_again():
    fleet = make_fleet()
    fleet.rent("B2", "ann")
    fleet.return_bike("B2")
    assert fleet.available("city") == ["B2", "B3"]


def test_available_without_a_kind_is_unchanged():
    fleet = make_fleet()
    fleet.rent("B2", "ann")
    assert fleet.available() == ["B1", "B3"]
