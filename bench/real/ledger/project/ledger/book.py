"""The book of accounts."""


class Book:
    """Accounts by name, each with a balance in cents."""

    def __init__(self):
        self.balances = {}

    def open(self, name):
        """Opens the account `name` with a balance of 0."""
        self.balances.setdefault(name, 0)

    def deposit(self, name, cents):
        """Adds `cents` to the account `name`."""
        self.balances[name] += cents

    def withdraw(self, name, cents):
        """Takes `cents` out of the account `name`."""
        self.balances[name] -= cents

    def balance(self, name):
        """The balance of the account `name`."""
        return self.balances[name]

    def names(self):
        """The names of the accounts, sorted."""
        return sorted(self.balances)
