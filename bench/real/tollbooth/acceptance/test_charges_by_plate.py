from tollbooth.trips import Account


def make_account():
    account = Account("Ann Lee")
    account.register("AB12CDE", "car")
    account.register("VN65XYZ", "van")
    account.register("MC01ABC", "motorcycle")
    account.record_trip("AB12CDE", "2026-03-02", "08:00")
    account.record_trip("AB12CDE", "2026-03-02", "12:00")
    account.record_trip("VN65XYZ", "2026-03-02", "12:00")
    return account


def test_charges_per_plate():
    assert make_account().charges_by_plate() == {"AB12CDE": 750, "VN65XYZ": 500, "MC01ABC": 0}


def test_account_without_vehicles():
    assert Account("Bob Cole").charges_by_plate() == {}


def test_adds_up_to_the_total():
    account = make_account()
    assert sum(account.charges_by_plate().values()) == account.total()
