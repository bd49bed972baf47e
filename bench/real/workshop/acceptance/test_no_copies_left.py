import pytest

from lending.catalog import Catalog, NoCopiesLeft


def test_is_a_value_error():
    assert issubclass(NoCopiesLeft, ValueError)


def test_lending_the_last_copy_twice_raises_with_the_isbn():
    catalog = Catalog()
    catalog.add_book("0306406152", "Signals and Systems")
    catalog.lend("0306406152", "ann")
    with pytest.raises(NoCopiesLeft) as caught:
        catalog.lend("0306406152", "bob")
    assert caught.value.isbn == "0306406152"


def test_lending_while_copies_remain_still_works():
    catalog = Catalog()
    catalog.add_book("0306406152", "Signals and Systems", copies=2)
    catalog.lend("0306406152", "ann")
    catalog.lend("0306406152", "bob")
    assert catalog.available("0306406152") == 0
    assert catalog.borrowers("0306406152") == ["ann", "bob"]
