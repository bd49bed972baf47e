"""A small harvest tracker for fruit orchards."""

__version__ = "0.1.0"
