import pytest

from foundry.alloys import pattern_sizes


def test_three_dimensions():
    assert pattern_sizes("aluminium", (100, 250, 1000)) == (101, 253, 1013)


def test_two_dimensions():
    assert pattern_sizes("iron", (400, 60)) == (404, 61)


def test_returns_a_tuple():
    assert isinstance(pattern_sizes("iron", (400, 60)), tuple)


def test_no_dimensions():
    assert pattern_sizes("bronze", ()) == ()


def test_a_dimension_below_one_mm():
    with pytest.raises(ValueError):
        pattern_sizes("iron", (400, 0))


def test_unknown_alloy():
    with pytest.raises(KeyError):
        pattern_sizes("gold", (100,))
