import pytest

from gradebook.scores import median


def test_odd_number_of_values():
    assert median([70, 90, 80]) == 80


def test_even_number_of_values():
    assert median([70, 80, 90, 100]) == 85.0


def test_empty_list_is_an_error():
    with pytest.raises(ValueError):
        median([])


def test_input_list_is_not_changed():
    values = [90, 70, 80]
    median(values)
    assert values == [90, 70, 80]
