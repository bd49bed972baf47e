from transit.timetable import Timetable


def make_timetable() -> Timetable:
    timetable = Timetable("Line 4")
    timetable.add_departure("Central", "07:45")
    timetable.add_departure("Central", "08:30")
    return timetable


def test_minutes_until_next_departure():
    assert make_timetable().minutes_until_next("Central", "08:10") == 20


def test_zero_when_departure_is_now():
    assert make_timetable().minutes_until_next("Central", "07:45") == 0


def test_none_when_no_more_departures():
    assert make_timetable().minutes_until_next("Central", "08:45") is None


def test_none_for_unknown_stop():
    assert make_timetable().minutes_until_next("Airport", "08:00") is None
