import pytest

from ledger.money import parse_entry


def test_parse_entry_reads_name_and_amount():
    assert parse_entry("ann,12.50") == ("ann", 1250)
    assert parse_entry(" bob , 3 ") == ("bob", 300)


def test_parse_entry_without_an_amount_raises_value_error():
    with pytest.raises(ValueError):
        parse_entry("ann")
    with pytest.raises(ValueError):
        parse_entry("ann,lots")
