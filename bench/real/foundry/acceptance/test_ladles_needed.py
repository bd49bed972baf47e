import pytest

from foundry.alloys import ladles_needed


def test_two_full_fills():
    assert ladles_needed(180000, 100000) == 2


def test_a_gram_more_takes_another_fill():
    assert ladles_needed(180001, 100000) == 3
    assert ladles_needed(250000, 100000) == 3


def test_a_little_metal_and_none():
    assert ladles_needed(500, 100000) == 1
    assert ladles_needed(0, 100000) == 0


def test_no_ladle():
    with pytest.raises(ValueError):
        ladles_needed(1000, 0)
    with pytest.raises(ValueError):
        ladles_needed(1000, -100)


def test_negative_metal():
    with pytest.raises(ValueError):
        ladles_needed(-1, 100000)
