"""Tiny helpers for keeping a course grade book."""

__version__ = "0.1.0"
