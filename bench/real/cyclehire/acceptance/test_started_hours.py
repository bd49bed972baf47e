from cyclehire.pricing import rental_cost


def test_a_started_hour_is_charged_in_full():
    assert rental_cost(90, 400) == 800


def test_just_over_two_hours_is_three_hours():
    assert rental_cost(121, 300) == 900


def test_whole_hours_and_the_minimum_are_unchanged():
    assert rental_cost(60, 400) == 400
    assert rental_cost(10, 400) == 400
