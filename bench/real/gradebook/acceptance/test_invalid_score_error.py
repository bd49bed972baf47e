import pytest

from gradebook.book import GradeBook, InvalidScoreError


def test_is_a_value_error():
    assert issubclass(InvalidScoreError, ValueError)


def test_out_of_range_scores_raise():
    book = GradeBook("Biology 101")
    with pytest.raises(InvalidScoreError):
        book.add_score("Ana", 101)
    with pytest.raises(InvalidScoreError):
        book.add_score("Ana", -5)


def test_rejected_score_is_not_recorded():
    book = GradeBook("Biology 101")
    for score in (101, -5):
        with pytest.raises(InvalidScoreError):
            book.add_score("Ana", score)
    assert book.scores("Ana") == []


def test_limits_are_valid():
    book = GradeBook("Biology 101")
    book.add_score("Ana", 0)
    book.add_score("Ana", 100)
    assert book.scores("Ana") == [0, 100]
