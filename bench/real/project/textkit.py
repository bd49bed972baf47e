"""Small text helpers."""


def shout(text):
    """Return the text in upper case, followed by an exclamation mark."""
    return text.upper() + "!"
