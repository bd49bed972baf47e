from transit.times import add_minutes, from_minutes, to_minutes


def test_to_minutes():
    assert to_minutes("00:00") == 0
    assert to_minutes("07:05") == 425
    assert to_minutes("23:59") == 1439


def test_from_minutes_pads_with_zeros():
    assert from_minutes(0) == "00:00"
    assert from_minutes(425) == "07:05"


def test_round_trip():
    for text in ("06:30", "12:00", "18:45"):
        assert from_minutes(to_minutes(text)) == text


def test_add_minutes():
    assert add_minutes("07:05", 30) == "07:35"
    assert add_minutes("08:50", 15) == "09:05"
    assert add_minutes("09:05", -15) == "08:50"
