import pytest

from sawmill.timber import pieces_per_board


def test_the_kerf_costs_a_piece():
    assert pieces_per_board(4800, 1200) == 3


def test_without_a_kerf():
    assert pieces_per_board(4800, 1200, kerf=0) == 4


def test_no_cut_after_the_last_piece():
    assert pieces_per_board(3000, 996) == 3
    assert pieces_per_board(3000, 998) == 2


def test_a_piece_as_long_as_the_board_or_longer():
    assert pieces_per_board(2400, 2400) == 1
    assert pieces_per_board(1800, 2400) == 0


def test_rejects_piece_lengths_of_zero_or_less():
    with pytest.raises(ValueError):
        pieces_per_board(3000, 0)
    with pytest.raises(ValueError):
        pieces_per_board(3000, -50)
