import pytest

from gradebook.weights import weighted_average


def test_weights_change_the_average():
    assert weighted_average([80, 90], [1, 3]) == 87.5


def test_equal_weights_give_plain_average():
    assert weighted_average([70, 80], [2, 2]) == 75.0


def test_different_lengths_are_an_error():
    with pytest.raises(ValueError):
        weighted_average([80, 90], [1])


def test_zero_total_weight_is_an_error():
    with pytest.raises(ValueError):
        weighted_average([80], [0])
