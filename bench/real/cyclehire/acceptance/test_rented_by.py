from cyclehire.fleet import Fleet


def make_fleet():
    fleet = Fleet("Riverside")
    fleet.add_bike("B1", "road")
    fleet.add_bike("B2", "city")
    fleet.add_bike("B3", "city")
    fleet.rent("B3", "ann")
    fleet.rent("B1", "ann")
    fleet.rent("B2", "bob")
    return fleet


def test_bikes_a_customer_has_out_sorted():
    assert make_fleet().rented_by("ann") == ["B1", "B3"]


def test_a_customer_with_no_bikes():
    assert make_fleet().rented_by("cat") == []


def test_a_returned_bike_is_no_longer_listed():
    fleet = make_fleet()
    fleet.return_bike("B1")
    assert fleet.rented_by("ann") == ["B3"]
