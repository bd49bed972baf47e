from gradebook.scores import average, letter_grade, percentage


def test_percentage():
    assert percentage(17, 20) == 85.0
    assert percentage(1, 3) == 33.3
    assert percentage(0, 10) == 0.0


def test_letter_grades():
    assert letter_grade(95) == "A"
    assert letter_grade(85) == "B"
    assert letter_grade(72.5) == "C"
    assert letter_grade(64) == "D"
    assert letter_grade(30) == "F"


def test_average():
    assert average([80, 90]) == 85.0
    assert average([70]) == 70.0


def test_average_of_nothing_is_zero():
    assert average([]) == 0.0
