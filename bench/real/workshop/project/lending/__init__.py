"""The loans desk of a small library. Books are known by ISBN; fines are integers of cents."""
