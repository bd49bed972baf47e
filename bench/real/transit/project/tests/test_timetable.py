from transit.timetable import Timetable


def make_timetable() -> Timetable:
    timetable = Timetable("Line 4")
    timetable.add_departure("Central", "08:30")
    timetable.add_departure("Central", "07:45")
    timetable.add_departure("Harbour", "08:05")
    return timetable


def test_departures_are_sorted():
    assert make_timetable().departures("Central") == ["07:45", "08:30"]


def test_unknown_stop_has_no_departures():
    assert make_timetable().departures("Airport") == []


def test_stops_in_insertion_order():
    assert make_timetable().stops() == ["Central", "Harbour"]


def test_len_counts_all_departures():
    timetable = make_timetable()
    assert len(timetable) == 3
    assert timetable.route == "Line 4"
