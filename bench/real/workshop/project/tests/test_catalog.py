import pytest

from lending.catalog import Catalog


def make_catalog():
    catalog = Catalog()
    catalog.add_book("0306406152", "Signals and Systems", copies=2)
    return catalog


def test_lending_takes_a_copy_off_the_shelf():
    catalog = make_catalog()
    catalog.lend("0306406152", "ann")
    assert catalog.available("0306406152") == 1
    assert catalog.borrowers("0306406152") == ["ann"]


def test_giving_back_puts_the_copy_back():
    catalog = make_catalog()
    catalog.lend("0306406152", "ann")
    catalog.give_back("0306406152", "ann")
    assert catalog.available("0306406152") == 2


def test_no_lending_when_every_copy_is_out():
    catalog = make_catalog()
    catalog.lend("0306406152", "ann")
    catalog.lend("0306406152", "bob")
    with pytest.raises(ValueError):
        catalog.lend("0306406152", "cy")


def test_title_of():
    assert make_catalog().title_of("0306406152") == "Signals and Systems"
