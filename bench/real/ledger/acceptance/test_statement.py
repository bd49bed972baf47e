from ledger.book import Book
from ledger.display import statement


def test_statement_lists_accounts_sorted_with_their_balance():
    book = Book()
    book.open("bob")
    book.open("ann")
    book.deposit("ann", 1234)
    book.deposit("bob", 5)
    assert statement(book) == "ann: $12.34\nbob: $0.05"


def test_statement_of_an_empty_book_is_empty():
    assert statement(Book()) == ""
