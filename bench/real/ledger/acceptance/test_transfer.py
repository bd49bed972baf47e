import pytest

from ledger.book import Book


def test_transfer_moves_money_between_accounts():
    book = Book()
    book.open("ann")
    book.open("bob")
    book.deposit("ann", 1000)
    book.transfer("ann", "bob", 300)
    assert book.balance("ann") == 700
    assert book.balance("bob") == 300


def test_transfer_to_an_account_never_opened_raises_key_error():
    book = Book()
    book.open("ann")
    book.deposit("ann", 1000)
    with pytest.raises(KeyError):
        book.transfer("ann", "zed", 100)
