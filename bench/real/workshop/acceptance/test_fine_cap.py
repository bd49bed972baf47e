from lending.fines import fine


def test_a_very_late_book_costs_the_maximum():
    assert fine(200) == 1000


def test_smaller_fines_are_unchanged():
    assert fine(10) == 140
