from transit.timetable import Timetable


def make_timetable() -> Timetable:
    timetable = Timetable("Line 4")
    for time in ("07:45", "08:00", "08:30"):
        timetable.add_departure("Central", time)
    return timetable


def test_next_departure_after_a_time():
    assert make_timetable().next_departure("Central", "07:50") == "08:00"


def test_departure_exactly_at_time_counts():
    assert make_timetable().next_departure("Central", "08:00") == "08:00"


def test_none_when_no_departure_left():
    assert make_timetable().next_departure("Central", "08:31") is None


def test_none_for_unknown_stop():
    assert make_timetable().next_departure("Airport", "07:00") is None
