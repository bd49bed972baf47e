"""The books the library owns and who has borrowed them."""


class Catalog:
    """Books by ISBN: their title, how many copies the library owns, and the members who
    have a copy out (one entry per copy lent)."""

    def __init__(self):
        self.titles = {}
        self.copies = {}
        self.loans = {}

    def add_book(self, isbn, title, copies=1):
        """Adds `copies` copies of the book `isbn` called `title` to the shelves."""
        self.titles[isbn] = title
        self.copies[isbn] = self.copies.get(isbn, 0) + copies
        self.loans.setdefault(isbn, [])

    def title_of(self, isbn):
        """The title of the book `isbn`."""
        return self.titles[isbn]

    def available(self, isbn):
        """How many copies of the book `isbn` are on the shelf."""
        return self.copies[isbn] - len(self.loans[isbn])

    def lend(self, isbn, member):
        """Lends a copy of the book `isbn` to `member`.

        Raises ValueError when no copy is left on the shelf.
        """
        if self.available(isbn) < 1:
            raise ValueError(f"no copy of {isbn} left")
        self.loans[isbn].append(member)

    def give_back(self, isbn, member):
        """Takes back the copy of the book `isbn` that `member` borrowed."""
        self.loans[isbn].remove(member)

    def borrowers(self, isbn):
        """The members who have a copy of the book `isbn`, sorted."""
        return sorted(self.loans[isbn])
