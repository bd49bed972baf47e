"""Charging for a small toll road."""

__version__ = "0.1.0"
