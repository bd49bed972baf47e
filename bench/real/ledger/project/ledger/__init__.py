"""A household ledger. Amounts are integers of cents."""
