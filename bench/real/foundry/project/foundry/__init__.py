"""Pricing and planning castings at a small metal foundry."""

__version__ = "0.1.0"
