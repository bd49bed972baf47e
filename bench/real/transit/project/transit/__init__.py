"""Tiny helpers for working with public-transport timetables."""

__version__ = "0.1.0"
