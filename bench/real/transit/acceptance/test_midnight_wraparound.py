from transit.times import add_minutes, from_minutes


def test_from_minutes_wraps_past_midnight():
    assert from_minutes(1450) == "00:10"


def test_add_minutes_forward_over_midnight():
    assert add_minutes("23:50", 20) == "00:10"


def test_add_minutes_backward_over_midnight():
    assert add_minutes("00:10", -20) == "23:50"


def test_times_within_the_day_unchanged():
    assert from_minutes(425) == "07:05"
    assert add_minutes("07:05", 30) == "07:35"
