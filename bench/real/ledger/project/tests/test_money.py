import pytest

from ledger.money import parse_amount


def test_parse_amount_reads_dollars_and_cents():
    assert parse_amount("12.34") == 1234
    assert parse_amount("12.5") == 1250
    assert parse_amount(" 7 ") == 700


def test_parse_amount_refuses_words():
    with pytest.raises(ValueError):
        parse_amount("twelve")
