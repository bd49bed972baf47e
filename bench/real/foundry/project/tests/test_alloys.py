import pytest

from foundry.alloys import casting_weight, get_alloy, known_alloys, metal_cost, pattern_length


def test_get_alloy_ignores_case_and_spaces():
    assert get_alloy(" Bronze ").name == "bronze"
    assert get_alloy("iron").density == 7200


def test_get_alloy_of_an_unknown_alloy():
    with pytest.raises(KeyError):
        get_alloy("gold")


def test_known_alloys():
    assert known_alloys() == ["aluminium", "brass", "bronze", "iron"]


def test_casting_weight_is_rounded_up_to_a_gram():
    assert casting_weight("aluminium", 1000) == 2700
    assert casting_weight("bronze", 3) == 27


def test_pattern_length_adds_the_shrinkage():
    assert pattern_length("iron", 500) == 505
    assert pattern_length("aluminium", 1000) == 1013
    assert pattern_length("aluminium", 50) == 51


def test_pattern_length_must_be_at_least_one_mm():
    with pytest.raises(ValueError):
        pattern_length("iron", 0)


def test_metal_cost_is_rounded_up_to_a_penny():
    assert metal_cost("iron", 10000) == 1500
    assert metal_cost("brass", 1001) == 901
