from ledger.book import Book


def test_deposit_and_withdraw_change_the_balance():
    book = Book()
    book.open("ann")
    book.deposit("ann", 500)
    book.withdraw("ann", 200)
    assert book.balance("ann") == 300


def test_names_are_sorted():
    book = Book()
    book.open("bob")
    book.open("ann")
    assert book.names() == ["ann", "bob"]
