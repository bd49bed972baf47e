"""A small rental desk for a bike-hire shop."""

__version__ = "0.1.0"
