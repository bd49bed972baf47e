import pytest

from ledger.book import Book


def test_withdrawing_more_than_the_balance_raises_and_changes_nothing():
    book = Book()
    book.open("ann")
    book.deposit("ann", 500)
    with pytest.raises(ValueError):
        book.withdraw("ann", 800)
    assert book.balance("ann") == 500


def test_withdrawing_the_whole_balance_is_allowed():
    book = Book()
    book.open("ann")
    book.deposit("ann", 500)
    book.withdraw("ann", 500)
    assert book.balance("ann") == 0
