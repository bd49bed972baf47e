import textkit
from textkit import headline


def test_title_case_and_strip():
    assert headline("  the quick fox ", 20) == "The Quick Fox"


def test_truncated():
    assert headline("the quick brown fox", 12) == "The Quick..."


def test_uses_truncate(monkeypatch):
    calls = []
    real = textkit.truncate

    def spy(text, width):
        calls.append((text, width))
        return real(text, width)

    monkeypatch.setattr(textkit, "truncate", spy)
    textkit.headline("abc", 10)
    assert calls == [("Abc", 10)]
