import pytest

from ledger.book import Book, UnknownAccount


def test_unknown_account_is_a_key_error():
    assert issubclass(UnknownAccount, KeyError)


def test_balance_of_an_account_never_opened_raises_unknown_account_naming_it():
    with pytest.raises(UnknownAccount) as raised:
        Book().balance("zed")
    assert "zed" in str(raised.value)


def test_balance_of_an_open_account_still_works():
    book = Book()
    book.open("ann")
    assert book.balance("ann") == 0
