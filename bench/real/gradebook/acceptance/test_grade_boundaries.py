from gradebook.scores import letter_grade


def test_exactly_90_is_an_a():
    assert letter_grade(90) == "A"


def test_other_thresholds_earn_their_grade():
    assert letter_grade(80) == "B"
    assert letter_grade(70) == "C"
    assert letter_grade(60) == "D"


def test_just_below_a_threshold_is_unchanged():
    assert letter_grade(89.9) == "B"
    assert letter_grade(59.9) == "F"
