from transit.times import minutes_between


def test_same_day():
    assert minutes_between("07:05", "08:00") == 55


def test_across_midnight():
    assert minutes_between("23:30", "00:15") == 45


def test_same_time_is_zero():
    assert minutes_between("09:00", "09:00") == 0
